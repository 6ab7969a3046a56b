"""Helpers for bot writers and tests: replaying JSON move logs, every seat's legal moves at
once, telling a Wild Draw Four bluff apart, and a sensible random choice of move.

None of these change a rule: they read the state (or a view) and call the engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .cards import (
    CODE_TO_CARD,
    COLOR_INDEX,
    COLOR_LETTERS,
    COLOR_OF,
    COLORS,
    NO_COLOR,
    NUM_KINDS,
    PLAYABLE,
    WILD_DRAW_FOUR,
)
from .engine import _pass_turn, apply, legal_moves, new_game
from .errors import IllegalMove, MalformedMove, UnoError
from .moves import CATCH, KEEP_MOVE, PLAY, UNO, Move
from .options import Options
from .state import DRAWN, GameState

# A move as the engine hands it out, or as JSON (a view's "legal_moves", the API's move log).
AnyMove = TypeVar("AnyMove", Move, dict[str, Any])


# --- replay --------------------------------------------------------------------------------
def replay(
    options: Options | Mapping[str, object],
    seed: int,
    moves: Iterable[tuple[int, Move | Mapping[str, Any]] | Mapping[str, Any]],
) -> GameState:
    """Rebuild a game from its options, seed and move log.

    ``options`` is an ``Options`` or its JSON form. Each entry of ``moves`` is a
    ``(seat, move)`` pair, where the move is a ``Move`` or its JSON form, or a JSON object with
    ``"seat"`` and ``"move"`` keys — what the replay endpoint and the end-of-game notice give
    (other keys, such as ``number`` or ``created_at``, are ignored). So a saved replay document
    ``doc`` rebuilds with ``replay(doc["options"], doc["seed"], doc["moves"])``. A log recorded
    before every draw waited for the drawer's ``keep`` replays too (``apply_recorded``).
    """
    if not isinstance(options, Options):
        options = Options.from_json(options)
    state = new_game(options, seed)
    for number, entry in enumerate(moves, 1):
        try:
            seat, move = _log_entry(entry)
            apply_recorded(state, seat, move)
        except (IllegalMove, MalformedMove) as error:  # the same kind, saying where
            raise type(error)(f"move log entry {number}: {error.reason}") from error
        except UnoError as error:  # an entry that is no (seat, move) pair
            raise UnoError(f"move log entry {number}: {error.reason}") from error
    return state


def apply_recorded(state: GameState, seat: int, move: Move) -> None:
    """``apply`` for a stored move log (a replay), which may have been recorded before every
    draw waited for the drawer: an unplayable drawn card then passed the turn at once, so such
    a log has no ``keep`` after it. When the state waits for that ``keep`` (the only legal move
    then) and the log's next move is anything else, the turn passes first as it did then, not
    counted as a move: the rebuilt game is the one that was played, move numbers included.
    Otherwise (every log recorded since) this is exactly ``apply``: a move legal as the state
    stands is applied as it is, and only one that ``apply`` refuses is read as a legacy log's,
    so that no log recorded under today's rules can be replayed differently."""
    if (
        state.phase == DRAWN
        and not (seat == state.turn and move == KEEP_MOVE)
        and not PLAYABLE[state.color * NUM_KINDS + state.discard[-1]][state.drawn]
    ):
        try:
            apply(state, seat, move)
            return
        except IllegalMove:
            pass  # refused before it changed anything: a legacy log's move
        drawer, drawn = state.turn, state.drawn
        _pass_turn(state, drawer)
        state.cache_ver = -1
        try:
            apply(state, seat, move)
        except UnoError:  # not a legacy log either: leave the state as it was
            state.turn, state.phase, state.drawn = drawer, DRAWN, drawn
            state.cache_ver = -1
            raise
        return
    apply(state, seat, move)


def _log_entry(entry: object) -> tuple[int, Move]:
    if isinstance(entry, Mapping):
        if "seat" not in entry or "move" not in entry:
            raise UnoError("a move log entry needs 'seat' and 'move'")
        seat, move = entry["seat"], entry["move"]
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        seat, move = entry
    else:
        raise UnoError(f"a move log entry is a (seat, move) pair or an object, not {entry!r}")
    if not isinstance(move, Move):
        move = Move.from_json(dict(move) if isinstance(move, Mapping) else move)
    return seat, move


# --- who can move --------------------------------------------------------------------------
def all_legal_moves(state: GameState) -> dict[int, list[Move]]:
    """Every seat's legal moves now, for the seats that have any: the awaited seat, and out of
    turn whoever may catch a missed Uno call, make a late call or jump in."""
    out: dict[int, list[Move]] = {}
    for seat in range(state.n):
        moves = legal_moves(state, seat)
        if moves:
            out[seat] = moves
    return out


# --- Wild Draw Four bluffs -----------------------------------------------------------------
def is_bluff(state: GameState, seat: int, move: Move | Mapping[str, Any]) -> bool:
    """True if ``move`` is a Wild Draw Four that ``seat`` may play but only as a bluff: they
    hold a card of the current colour, so a challenge would make them draw 4. The bluff is
    legal (``legal_moves`` offers it); only a challenge punishes it."""
    if _field(move, "type") != PLAY or _field(move, "card") != "W4":
        return False
    hand = list(state.hands[seat])
    if WILD_DRAW_FOUR not in hand:
        return False
    hand.remove(WILD_DRAW_FOUR)  # the restriction concerns the cards left after the play
    return state.color in [COLOR_OF[c] for c in hand]


def honest_moves(state: GameState, seat: int) -> list[Move]:
    """``legal_moves`` without the Wild Draw Four bluffs (the strict official restriction)."""
    moves = legal_moves(state, seat)
    if not any(m.card == "W4" for m in moves):
        return moves
    return [m for m in moves if not is_bluff(state, seat, m)]


def view_bluffs(view: Mapping[str, Any]) -> bool:
    """From a seat's view: would a Wild Draw Four played now be a bluff? (The seat holds a card
    of the current colour besides the Wild Draw Four.) False when there is no colour yet."""
    color = view.get("color")
    if color not in COLOR_INDEX:
        return False
    letter = COLOR_LETTERS[COLOR_INDEX[color]]
    hand: list[str] = list(view["hand"])
    if "W4" not in hand:
        return False
    hand.remove("W4")
    return any(code[0] == letter for code in hand)


# --- a sensible random player --------------------------------------------------------------
def random_move(moves: Sequence[AnyMove], rng: random.Random) -> AnyMove:
    """A random move that plays sensibly, as a beginner would:

    * a free action first: a late Uno call, or catching a missed one;
    * a card whenever one can be played (also the card just drawn, a stack, a jump-in): each
      playable card equally likely, then its colour (or Seven-O target) at random, and a play
      of the next-to-last card always calls Uno;
    * otherwise one of the rest at random (draw, keep, accept, challenge, first colour).

    A uniform choice over ``legal_moves`` is skewed: a wild appears once per colour, a
    next-to-last card twice (with and without the call), and drawing or keeping instead of
    playing makes hands grow: such players need about a thousand moves a hand, and with
    ``draw_until_playable`` most four-player hands hit the move cap. Works on ``Move`` objects
    and on JSON moves (a view's ``legal_moves``) alike.
    """
    if not moves:
        raise UnoError("there is no legal move to choose from")
    for wanted in (UNO, CATCH):
        for move in moves:
            if _field(move, "type") == wanted:
                return move
    plays = [m for m in moves if _field(m, "type") == PLAY]
    if plays:
        if any(_field(m, "uno") for m in plays):  # the same plays exist with the call: call
            plays = [m for m in plays if _field(m, "uno")]
        by_card: dict[str, list[AnyMove]] = {}
        for move in plays:
            by_card.setdefault(_field(move, "card"), []).append(move)
        cards = list(by_card.values())
        variants = cards[rng.randrange(len(cards))]
        return variants[rng.randrange(len(variants))]
    return moves[rng.randrange(len(moves))]


def _field(move: Move | Mapping[str, Any], name: str) -> Any:
    if isinstance(move, Move):
        return getattr(move, name)
    return move.get(name)


def card_color(code: str) -> str | None:
    """The colour name of a card code (``"R7"`` -> ``"red"``); None for a wild.
    ``MalformedMove`` for a code that is no card."""
    card = CODE_TO_CARD.get(code)
    if card is None:
        raise MalformedMove(f"no card has the code {code!r}")
    color = COLOR_OF[card]
    return None if color == NO_COLOR else COLORS[color]


__all__ = [
    "all_legal_moves",
    "card_color",
    "honest_moves",
    "is_bluff",
    "random_move",
    "replay",
    "view_bluffs",
]
