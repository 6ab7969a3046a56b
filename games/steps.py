"""The steps every change of a game is made of, shared by the services (a change in the
database), games.memory (a game played in memory) and games.batch (games begun together).

Each step writes through a ``games.book`` book (the database by default), so the three paths
run the very same rules: record a move, play forfeited seats, arm the turn clock, strike and
forfeit a silent seat, end the game. None of them locks or commits: the caller does (the
services hold the game's lock in one transaction; the other two write their rows later).

Every change bumps ``Game.version`` by one and is recorded under that version: a move as its
``MoveRecord``, anything else (joins, start, strikes, the end) as a ``GameEvent``.
"""

from __future__ import annotations

from typing import Any

from games import clock
from games import uno as engine
from games.book import DATABASE, DatabaseBook
from games.engine_state import load_state
from games.errors import IllegalMoveError
from games.models import (
    EventKind,
    Game,
    GameEvent,
    GameStatus,
    MoveRecord,
    MoveSource,
    Seat,
)

# Moves a seat may make while another seat is awaited; the engine decides if they are legal.
_OUT_OF_TURN_TYPES = frozenset({"catch", "uno"})
# A forfeited seat is played by the server at once; this bounds one such burst (a full table of
# forfeits ends the game long before, see ``forfeit``).
_MAX_SERVER_MOVES = 10_000
# Default moves in one timeout: at most colour, draw, keep.
_MAX_CLOCK_MOVES = 4
# Why a seat was forfeited (its event's ``reason``): it reached the table's max strikes; its
# bot was disabled; its bot answered none of its calls (a tournament found it unresponsive,
# bots.driver), so its seats in the match's later games are forfeited without a call.
FORFEIT_STRIKES, FORFEIT_DISABLED, FORFEIT_UNRESPONSIVE = "strikes", "disabled", "unresponsive"
FORFEIT_REASONS = (FORFEIT_STRIKES, FORFEIT_DISABLED, FORFEIT_UNRESPONSIVE)
# Why a seat was struck (its event's ``reason``): its turn clock ran out, or the kind of its
# driver's failure (a bot's call: ``timeout``, ``status``... as bots.runner names them).
STRIKE_CLOCK = "clock"


# --- versions and events ----------------------------------------------------------------------
def _bump(game: Game, book: DatabaseBook = DATABASE) -> int:
    """The game's next version; the caller records what happened under it and saves."""
    game.version += 1
    book.announce(game)
    return game.version


def event(game: Game, kind: str, *, seat: int | None = None, book: DatabaseBook = DATABASE,
          **data: Any) -> GameEvent:
    """Append a public event (anything but a move: moves are their own records)."""
    return book.event(GameEvent(game=game, version=_bump(game, book), kind=kind, seat=seat,
                                data=data))


def finish(game: Game, *, reason: str, status: str = GameStatus.FINISHED,
           book: DatabaseBook = DATABASE) -> None:
    game.status = status
    game.end_reason = reason
    game.finished_at = clock.now()
    game.turn_deadline = None
    game.awaiting = None
    kind = EventKind.FINISHED if status == GameStatus.FINISHED else EventKind.ABORTED
    event(game, kind, reason=reason, winner=game.winner, scores=game.scores, book=book)


# --- moves ------------------------------------------------------------------------------------
def may_move_out_of_turn(state: engine.GameState, seat: int, move: engine.Move) -> bool:
    """Catch, late Uno and (with the option) jump-in are made by seats not awaited."""
    if move.type in _OUT_OF_TURN_TYPES:
        return True
    return move.type == "play" and state.options.jump_in


def apply_and_record(
    game: Game, state: engine.GameState, seat: int, move: engine.Move, source: str,
    book: DatabaseBook = DATABASE,
) -> MoveRecord:
    try:
        engine.apply(state, seat, move)
    except engine.IllegalMove as exc:
        raise IllegalMoveError(exc.reason) from None
    book.sync(game, state)
    game.move_count += 1
    # The move record is the move's event too (``selectors.events_since`` merges the two).
    return book.move(game, number=game.move_count, version=_bump(game, book), seat=seat,
                     move=move.to_json(), source=source)


def after_move(
    game: Game,
    state: engine.GameState,
    *,
    previous_awaiting: int | None,
    mover: int | None,
    move_type: str | None = None,
    forfeited: set[int] | None = None,
    book: DatabaseBook = DATABASE,
) -> None:
    """The one hook after the game changed: finish it, play forfeited seats, and arm the
    awaited seat's turn clock. (A seat a bot drives hears of its turn through
    ``games.hooks``, told by ``notify.announce`` once the change commits.)"""
    if forfeited is None:
        forfeited = book.forfeited(game)
    for _ in range(_MAX_SERVER_MOVES):
        if state.finished or state.awaiting not in forfeited:
            break
        # A forfeited seat is played by the server at once, so the others never wait for it.
        seat = state.awaiting
        move = engine.default_move(state, seat)
        apply_and_record(game, state, seat, move, MoveSource.SERVER, book)
        mover, move_type = seat, move.type
    if state.finished:
        finish(game, reason="match", book=book)
        return
    if turn_changed(
        state, previous_awaiting=previous_awaiting, mover=mover, move_type=move_type
    ):
        book.arm(game)


def turn_changed(
    state: engine.GameState,
    *,
    previous_awaiting: int | None,
    mover: int | None,
    move_type: str | None,
) -> bool:
    """A new turn gets a fresh clock: the awaited seat changed, the awaited seat moved on
    within its turn (it drew; now it plays or keeps), or a jump-in changed the board under it.
    A catch or a late Uno never resets it, whoever makes it."""
    if state.awaiting != previous_awaiting:
        return True
    if move_type in _OUT_OF_TURN_TYPES:
        return False
    return mover == previous_awaiting or move_type == "play"


# --- turn clock and forfeits ------------------------------------------------------------------
def turn_clock_overdue(game: Game) -> bool:
    return (
        game.status == GameStatus.RUNNING
        and game.turn_deadline is not None
        and game.turn_deadline <= clock.now()
    )


def turn_clock_run(
    game: Game, *, source: str = MoveSource.CLOCK, reason: str | None = None,
    state: engine.GameState | None = None, book: DatabaseBook = DATABASE,
) -> None:
    """The awaited seat's time ran out, or its driver failed it (``reason``; the caller
    holds the lock): play for it. ``state``: the game's engine state, if the caller has it."""
    state = state if state is not None else load_state(game)
    seat_index = state.awaiting
    assert seat_index is not None  # a running game always awaits someone
    # Play default moves until the turn passes ("draw, then keep"): one timeout, one strike.
    for _ in range(_MAX_CLOCK_MOVES):
        move = engine.default_move(state, seat_index)
        apply_and_record(game, state, seat_index, move, source, book)
        if state.finished or state.awaiting != seat_index:
            break
    if not state.finished:
        seat = book.seat(game, seat_index)
        seat.strikes += 1
        book.seat_save(seat, ["strikes"])
        event(game, EventKind.STRIKE, seat=seat_index, strikes=seat.strikes,
              max_strikes=game.max_strikes, reason=reason or STRIKE_CLOCK, book=book)
        if seat.strikes >= game.max_strikes:
            forfeit(game, seat, book, reason=FORFEIT_STRIKES)
    if not game.is_over:
        after_move(game, state, previous_awaiting=seat_index, mover=seat_index, book=book)
    book.save(game)


def forfeit(game: Game, seat: Seat, book: DatabaseBook = DATABASE, *,
            reason: str = FORFEIT_STRIKES, settle: bool = True) -> None:
    """Forfeit: the seat stays in the game, played by the server at once from now on (see
    ``after_move``). With fewer than two seats left in play the game ends (``forfeits_settle``;
    ``settle`` False: the caller settles once it has forfeited every seat it means to).
    ``reason`` (the event's): one of FORFEIT_REASONS."""
    seat.forfeited = True
    book.seat_save(seat, ["forfeited"])
    event(game, EventKind.FORFEITED, seat=seat.index, reason=reason, book=book)
    if settle:
        forfeits_settle(game, book)


def forfeits_settle(game: Game, book: DatabaseBook = DATABASE) -> None:
    """With fewer than two seats left in play the game ends: the last one standing wins; with
    none (every seat forfeited at once), nobody does."""
    active = book.active(game)
    if len(active) < 2:
        game.winner = active[0] if active else None
        finish(game, reason="forfeit", book=book)
