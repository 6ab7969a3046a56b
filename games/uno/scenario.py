"""Build a game state from chosen hands, deck and discard, for tests and bot writers.

``scenario`` builds any position at the start of a turn; ``deal`` builds a hand's start, the
first discard's effects applied (a Skip skips, a Draw Two makes the first player draw...).

Example::

    >>> from games.uno import Move, apply, legal_moves, scenario
    >>> state = scenario(hands=[["R5", "W4"], ["G1", "G2"]], top="R3", deck=["B9", "Y1"])
    >>> [m.to_json() for m in legal_moves(state, 0) if m.card == "R5"]
    [{'type': 'play', 'card': 'R5'}, {'type': 'play', 'card': 'R5', 'uno': True}]
    >>> apply(state, 0, Move("play", card="R5", uno=True))
    >>> state.turn
    1
    >>> state = scenario({"stacking": True}, hands=[["R5"], ["G1"], ["B1"]], top="R3")
    >>> state.options.players, state.options.stacking
    (3, True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain

from .cards import (
    CODE_TO_CARD,
    COLOR_INDEX,
    COLOR_OF,
    COLORS,
    IS_NUMBER,
    NO_COLOR,
    WILD,
    WILD_DRAW_FOUR,
    build_deck,
)
from .engine import _first_discard_effect, shuffle
from .errors import UnoError
from .options import Options
from .state import CHOOSE_COLOR, PLAY, GameState, check_state


def _cards(codes: Sequence[str], what: str) -> list[int]:
    try:
        return [CODE_TO_CARD[c] for c in codes]
    except KeyError as exc:
        raise UnoError(f"{what}: unknown card code {exc.args[0]!r}") from exc


def _options(options: Options | Mapping[str, object] | None, players: int) -> Options:
    """The game's options: an ``Options``, or its JSON form with ``players`` taken from the
    number of hands unless given."""
    if options is None:
        return Options(players=players)
    if isinstance(options, Options):
        if options.players != players:
            raise UnoError(
                f"{players} hands given for {options.players} players (pass the options as a "
                "dict, e.g. {'stacking': True}, to take the number of players from the hands)"
            )
        return options
    return Options.from_json({"players": players, **options})


def scenario(
    options: Options | Mapping[str, object] | None = None,
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

    * ``options``: an ``Options`` (its ``players`` must match the hands) or a dict of option
      names and values (``players`` defaults to the number of hands); None: the defaults.
    * ``hands``: one list of card codes per seat.
    * ``top``: the top discard; ``discard``: the cards under it, bottom first.
    * ``color``: current colour; defaults to the colour of ``top`` (required for a wild top,
      otherwise the turn starts with a colour choice).
    * ``deck``: draw pile, next card first. ``None`` puts every card of the real deck not used
      elsewhere in the deck, shuffled with ``seed``. An explicit deck is taken as is, so
      scenarios may also exhaust the deck on purpose: the deck's other cards are out of play.
    * ``turn``, ``dealer``: seats; ``direction``: 1 (clockwise) or -1; ``scores``: one whole
      number, 0 or more, per seat.

    Raises ``UnoError`` naming the problem for a position no game reaches: a seat out of
    range, an unknown colour, a card the options' deck lacks (``WS``/``WC`` without
    ``deck_2018``) or more copies of a card than the deck has.
    """
    return _position(options, hands, top, color, deck, discard, turn, direction, dealer, scores,
                     seed, "scenario")


def _position(
    options: Options | Mapping[str, object] | None,
    hands: Sequence[Sequence[str]],
    top: str,
    color: str | None,
    deck: Sequence[str] | None,
    discard: Sequence[str],
    turn: int,
    direction: int,
    dealer: int | None,
    scores: Sequence[int] | None,
    seed: int,
    what: str,
) -> GameState:
    options = _options(options, len(hands))
    if type(seed) is not int:
        raise UnoError(f"{what}: seed {seed!r} is not a whole number")
    if color is not None and (not isinstance(color, str) or color not in COLOR_INDEX):
        raise UnoError(f"{what}: colour {color!r} is not one of {', '.join(COLORS)}")
    state = GameState(options, seed)
    state.hands = [_cards(h, "hands") for h in hands]
    top_card = _cards([top], "top")[0]
    state.discard = [*_cards(discard, "discard"), top_card]
    state.deck = [] if deck is None else _cards(deck, "deck")[::-1]
    in_play = sum(map(len, state.hands)) + len(state.discard) + len(state.deck)
    state.out_of_play = max(0, len(build_deck(options.deck_2018)) - in_play)
    state.turn = turn
    state.direction = direction
    state.dealer = 0 if dealer is None else dealer  # the default is worked out once checked
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
    check_state(state, what)  # what ``GameState.from_json`` checks, so the state reloads
    if dealer is None:
        state.dealer = (turn - direction) % options.players
    if deck is None:
        state.deck = _remaining(state, options.deck_2018)
        state.out_of_play = 0
        shuffle(state.rng, state.deck)
    return state


def deal(
    options: Options | Mapping[str, object] | None = None,
    *,
    hands: Sequence[Sequence[str]],
    top: str,
    dealer: int | None = None,
    deck: Sequence[str] | None = None,
    scores: Sequence[int] | None = None,
    seed: int = 0,
) -> GameState:
    """A hand just dealt: ``top`` is the card the dealer turned up, with its first-discard
    effects applied exactly as in a real deal (see docs/rules.md, "the first discard").

    A number: the seat left of the dealer plays. Skip: that seat misses its turn. Reverse: the
    dealer plays, counterclockwise. Draw Two: that seat draws two (from ``deck``) and misses its
    turn. A wild: that seat first declares the colour. ``dealer`` defaults to the last seat, so
    seat 0 is the one left of the dealer. A Wild Draw Four never stays as a first discard (and
    under ``start_2022`` only a number card does): asking for one raises ``UnoError``.
    Other arguments as for ``scenario``.
    """
    options = _options(options, len(hands))
    dealer = options.players - 1 if dealer is None else dealer
    if type(dealer) is not int or not 0 <= dealer < options.players:
        raise UnoError(
            f"deal: dealer {dealer!r} is not a seat of this {options.players}-player game"
        )
    card = _cards([top], "top")[0]
    if card == WILD_DRAW_FOUR or (options.start_2022 and not IS_NUMBER[card]):
        raise UnoError(f"{top} is never left as the first discard: it goes back into the deck")
    state = _position(options, hands, top, "red", deck, (), (dealer + 1) % options.players, 1,
                      dealer, scores, seed, "deal")
    _first_discard_effect(state, card, dealer)
    return state


def _remaining(state: GameState, deck_2018: bool) -> list[int]:
    """The deck's cards in no hand and not discarded, in order (``check_state`` has made sure
    no card is used more often than the deck has it)."""
    left = Counter(build_deck(deck_2018))
    left.subtract(chain(*state.hands, state.discard))
    return [card for card in sorted(left) for _ in range(left[card])]
