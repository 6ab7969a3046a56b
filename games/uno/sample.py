"""A whole game state consistent with what one seat's view shows: for bots that search.

A bot sees its own hand and the public table, never the other hands or the deck's order, so
it cannot run the engine forward from what it knows. ``sample_state`` fills in the hidden part
at random (a *determinization*): the cards the view does not place are dealt out to the other
hands, under the top of the discard pile and to the deck, in the numbers the view shows. Run
the engine on many such samples and keep the move that does best on average: that is
Monte Carlo search over the information the seat really has (docs/engine.md has a bot).

The sample keeps everything the view says, so ``view(sample_state(v, rng), v["seat"]) == v``
for every view ``v`` the engine gives. What the view does not say is drawn at random:

* the other hands, the cards under the top of the discard pile and the deck's order, uniformly
  from the cards not in the seat's hand or on the top; a hand a challenge showed the seat
  (``challenge_reveal``) goes back to its player as far as it still can (its cards not seen
  since, up to the hand's size: the player may have played and drawn meanwhile);
* a pending Wild Draw Four's legality (whether its player held the colour before it: the view
  does not show that colour), at even odds;
* the card another seat has just drawn (``pending.type`` ``drawn``): one of its cards;
* the hand's move count, for the hand's move cap: 0.

Nothing here knows more than a uniform draw: a seat that drew instead of playing probably has
no card of the colour, and one that played a Wild Draw Four probably bluffed less often than
not. A bot that tracks such things can deal the hidden cards itself with ``scenario``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .cards import CODE_TO_CARD, COLOR_INDEX, NO_COLOR, build_deck
from .errors import UnoError
from .options import Options
from .state import CHALLENGE, DRAWN, PHASE_NAMES, STACK, GameState, check_state, last_hand_copy


def sample_state(view: Mapping[str, Any], rng: random.Random) -> GameState:
    """A state ``view``'s seat cannot tell from the real one, its hidden cards drawn with
    ``rng`` (see the module's text for what is drawn). Its own RNG (future reshuffles) is
    seeded from ``rng`` too. Raises ``UnoError`` for a view no game shows (cards the deck has
    too few of, counts that do not add up)."""
    try:
        options = Options.from_json(view["options"])
        seat, counts = int(view["seat"]), [int(c) for c in view["hand_counts"]]
        hand, top = _cards(view["hand"]), _cards([view["top"]])[0]
    except (KeyError, TypeError, ValueError) as exc:
        raise UnoError(f"sample_state: not a seat's view ({exc!r})") from exc
    if len(counts) != options.players or not 0 <= seat < options.players or (
        counts[seat] != len(hand)
    ):
        raise UnoError("sample_state: the seat, its hand and the hand counts do not agree")
    state = GameState(options, rng.getrandbits(63))
    pending = view.get("pending") or {}
    reveal = view.get("challenge_reveal")
    unseen = _unseen(options, [hand, [top]])
    rng.shuffle(unseen)
    shown = _shown(reveal, unseen, counts, seat)
    for each in range(options.players):
        if each == seat:
            state.hands[each] = list(hand)
        else:
            mine = shown.get(each, [])
            state.hands[each] = [*mine, *_take(unseen, counts[each] - len(mine))]
    state.discard = [*_take(unseen, int(view["discard_count"]) - 1), top]
    state.deck = _take(unseen, int(view["deck_count"]))
    state.out_of_play = len(unseen)
    _table(state, view)
    _pending(state, view, pending, seat, rng)
    if reveal:
        state.reveal_seat, state.reveal_player = seat, int(reveal["seat"])
        state.reveal_hand = _cards(reveal["hand"])
    check_state(state, "sample_state")
    return state


def _cards(codes: Any) -> list[int]:
    try:
        return [CODE_TO_CARD[code] for code in codes]
    except KeyError as exc:
        raise UnoError(f"sample_state: unknown card code {exc.args[0]!r}") from exc


def _unseen(options: Options, placed: list[list[int]]) -> list[int]:
    """The options' deck less the cards the view places, in a fixed order (then shuffled)."""
    left = Counter(build_deck(options.deck_2018))
    for cards in placed:
        left.subtract(cards)
    short = sorted(card for card, count in left.items() if count < 0)
    if short:
        raise UnoError(f"sample_state: more copies of card {short[0]} than the deck has")
    return [card for card in sorted(left) for _ in range(left[card])]


def _shown(reveal: Mapping[str, Any] | None, unseen: list[int], counts: list[int], seat: int
           ) -> dict[int, list[int]]:
    """The cards a challenge showed the seat, taken out of ``unseen`` for the shown player's
    hand: as many as can still be there (the player may have played some since, and drawn
    others), up to its hand's size."""
    if not reveal or int(reveal["seat"]) == seat:
        return {}
    player = int(reveal["seat"])
    kept: list[int] = []
    for card in _cards(reveal["hand"]):
        if len(kept) < counts[player] and card in unseen:
            unseen.remove(card)
            kept.append(card)
    return {player: kept}


def _take(cards: list[int], count: int) -> list[int]:
    if count < 0 or count > len(cards):
        raise UnoError("sample_state: the view's card counts do not add up to the deck")
    taken = cards[len(cards) - count:]
    del cards[len(cards) - count:]
    return taken


def _table(state: GameState, view: Mapping[str, Any]) -> None:
    """The public table, as the view shows it."""
    color = view.get("color")
    state.color = COLOR_INDEX[color] if color is not None else NO_COLOR
    state.direction = int(view["direction"])
    state.turn = int(view["turn"])
    state.dealer = int(view["dealer"])
    state.phase = PHASE_NAMES.index(view["phase"])
    window = view.get("uno_window")
    state.uno_seat = -1 if window is None else int(window)
    state._scores = [int(score) for score in view["scores"]]
    state._hand_number = int(view["hand_number"])
    state._move_count = int(view["move_count"])
    state._winner = view.get("winner")
    state.last_hand = last_hand_copy(view.get("last_hand"))


def _pending(state: GameState, view: Mapping[str, Any], pending: Mapping[str, Any], seat: int,
             rng: random.Random) -> None:
    """The decision the game waits for: a drawn card, a Wild Draw Four, a stacked penalty."""
    if state.phase == DRAWN:
        drawer = state.hands[state.turn]
        card = pending.get("card")
        state.drawn = CODE_TO_CARD[card] if card is not None and state.turn == seat else (
            rng.choice(drawer) if drawer else -1
        )
    elif state.phase == CHALLENGE:
        state.w4_player = int(pending["player"])
        state.penalty = int(pending["penalty"])
        state.w4_hand = list(state.hands[state.w4_player])
        state.w4_illegal = rng.random() < 0.5
    elif state.phase == STACK:
        state.penalty = int(pending["penalty"])
