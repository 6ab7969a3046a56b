"""Build a game state from chosen hands, deck and discard, for tests and bot writers.

Example::

    >>> from games.uno import Move, apply, legal_moves
    >>> from games.uno.scenario import scenario
    >>> state = scenario(hands=[["R5", "W4"], ["G1", "G2"]], top="R3", deck=["B9", "Y1"])
    >>> [m.to_json() for m in legal_moves(state, 0) if m.card == "R5"]
    [{'type': 'play', 'card': 'R5'}, {'type': 'play', 'card': 'R5', 'uno': True}]
    >>> apply(state, 0, Move("play", card="R5", uno=True))
    >>> state.turn
    1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .cards import CODE_TO_CARD, COLOR_INDEX, COLOR_OF, NO_COLOR, WILD, build_deck
from .engine import shuffle
from .errors import UnoError
from .options import Options
from .state import CHOOSE_COLOR, PLAY, GameState


def _cards(codes: Sequence[str], what: str) -> list[int]:
    try:
        return [CODE_TO_CARD[c] for c in codes]
    except KeyError as exc:
        raise UnoError(f"{what}: unknown card code {exc.args[0]!r}") from exc


def scenario(
    options: Options | None = None,
    *,
    hands: Sequence[Sequence[str]],
    top: str,
    color: str | None = None,
    deck: Sequence[str] | None = None,
    discard: Sequence[str] = (),
    turn: int = 0,
    direction: int = 1,
    dealer: int | None = None,
    scores: Sequence[int] | None = None,
    seed: int = 0,
) -> GameState:
    """A state at the start of ``turn``'s ordinary turn (or colour choice if ``color`` is None
    and ``top`` is a wild).

    * ``hands``: one list of card codes per seat; ``options.players`` defaults to its length.
    * ``top``: the top discard; ``discard``: the cards under it, bottom first.
    * ``color``: current colour; defaults to the colour of ``top`` (required for a wild top,
      otherwise the turn starts with a colour choice).
    * ``deck``: draw pile, next card first. ``None`` puts every card of the real deck not used
      elsewhere in the deck, shuffled with ``seed`` (raises if a card is used too often).
      An explicit deck is taken as is, so scenarios may also exhaust the deck on purpose.
    """
    if options is None:
        options = Options(players=len(hands))
    if len(hands) != options.players:
        raise UnoError(f"{len(hands)} hands given for {options.players} players")
    state = GameState(options, seed)
    state.hands = [_cards(h, "hands") for h in hands]
    top_card = _cards([top], "top")[0]
    state.discard = [*_cards(discard, "discard"), top_card]
    if deck is None:
        state.deck = _remaining(state, options.deck_2018)
        shuffle(state.rng, state.deck)
    else:
        state.deck = _cards(deck, "deck")[::-1]
    state.turn = turn
    state.direction = direction
    state.dealer = (turn - direction) % options.players if dealer is None else dealer
    if scores is not None:
        state._scores = list(scores)
    if color is not None:
        state.color = COLOR_INDEX[color]
        state.phase = PLAY
    elif top_card >= WILD:
        state.color = NO_COLOR
        state.phase = CHOOSE_COLOR
    else:
        state.color = COLOR_OF[top_card]
        state.phase = PLAY
    return state


def _remaining(state: GameState, deck_2018: bool) -> list[int]:
    left = Counter(build_deck(deck_2018))
    used = Counter(c for h in state.hands for c in h) + Counter(state.discard)
    for card, count in used.items():
        if count > left[card]:
            raise UnoError("a card is used more often than the deck holds it")
        left[card] -= count
    return [card for card in sorted(left) for _ in range(left[card])]
