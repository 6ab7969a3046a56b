"""Where a game's changes are written: the rules around the engine (``games.steps``: a
move's record, strikes, forfeits, the end, the turn clock) write through a ``Book``.

* ``DatabaseBook`` (the default): every change straight to the database, under the game's
  lock; the per-move path of every REST game.
* ``games.memory.MemoryBook``: the changes kept in memory, written whole later
  (``games.memory.stretch_record``); a game whose every seat one driver plays.

Both run the very same steps, so they cannot disagree on what a change writes.
"""

from __future__ import annotations

from typing import Any

from games import clock, clock_checks, notify, rows
from games.engine_state import sync_public
from games.models import Game, GameEvent, MoveRecord, Seat


class DatabaseBook:
    """Each change written at once (the caller holds the game's lock)."""

    def sync(self, game: Game, state: Any) -> None:
        """The engine state changed: copy it onto the row (stored JSON and public facts)."""
        sync_public(game, state)

    def announce(self, game: Game) -> None:
        notify.announce(game)

    def move(self, game: Game, *, number: int, version: int, seat: int, move: Any,
             source: str) -> MoveRecord:
        return rows.move_insert(rows.new_move_record(
            game, number=number, version=version, seat=seat, move=move, source=source))

    def event(self, event: GameEvent) -> GameEvent:
        event.save(force_insert=True)
        return event

    def seat(self, game: Game, index: int) -> Seat:
        return game.seats.get(index=index)

    def seat_save(self, seat: Seat, fields: list[str]) -> None:
        seat.save(update_fields=fields)

    def forfeited(self, game: Game) -> set[int]:
        return set(game.seats.filter(forfeited=True).values_list("index", flat=True))

    def active(self, game: Game) -> list[int]:
        return list(game.seats.filter(forfeited=False).values_list("index", flat=True))

    def arm(self, game: Game) -> None:
        clock_checks.arm(game)

    def save(self, game: Game) -> None:
        rows.game_save(game)


DATABASE = DatabaseBook()


class KeptBook:
    """What every book that keeps its rows in memory shares (``games.memory.MemoryBook``,
    ``games.batch``'s new tables): the seats are the ones it was given, and nothing is
    stored until its owner writes the rows."""

    def __init__(self, seats: list[Seat]) -> None:
        self.seats = {seat.index: seat for seat in seats}
        self.events: list[GameEvent] = []
        self.armed = False  # a new turn began: the stored game gets a fresh deadline

    def event(self, event: GameEvent) -> GameEvent:
        if event.created_at is None:  # when it happened, not when its stretch is written
            event.created_at = clock.now()
        self.events.append(event)
        return event

    def seat(self, game: Game, index: int) -> Seat:
        return self.seats[index]

    def forfeited(self, game: Game) -> set[int]:
        return {i for i, seat in self.seats.items() if seat.forfeited}

    def active(self, game: Game) -> list[int]:
        return sorted(i for i, seat in self.seats.items() if not seat.forfeited)

    def arm(self, game: Game) -> None:
        self.armed = True

    def save(self, game: Game) -> None:
        return None
