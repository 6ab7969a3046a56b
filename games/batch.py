"""Many all-bot tables created and dealt at once: a tournament's games.

``tables_create_started`` writes, for every table, exactly the rows that
``services.game_create_seated`` and then ``services.game_start`` write (the Game row, its seats,
the "joined" and "started" events; ids and timestamps aside: tests/games/test_batch.py), by the
very same steps (``games.steps``) run against a ``_StartBook`` that keeps the rows, and then
inserts them all in three multi-row statements (games, seats, events) instead of about ten
statements and a transaction a game. A tournament begins the games it puts in flight together
this way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from games import clock, clock_checks, notify, rows, steps
from games import services as game_services
from games import uno as engine
from games.book import KeptBook
from games.engine_state import sync_public
from games.models import EventKind, Game, GameEvent, GameStatus, Seat


class _StartBook(KeptBook):
    """A ``games.book.DatabaseBook`` that keeps a new table's rows (nothing is stored yet)."""

    def __init__(self, seats: list[Seat]) -> None:
        super().__init__(seats)
        self.moves: list[dict[str, Any]] = []

    def sync(self, game: Game, state: engine.GameState) -> None:
        sync_public(game, state)

    def announce(self, game: Game) -> None:
        return None  # once the rows are in (``tables_create_started``)

    def move(self, game: Game, *, number: int, version: int, seat: int, move: Any,
             source: str) -> None:
        self.moves.append({"game": game, "number": number, "version": version, "seat": seat,
                           "move": move, "source": source})

    def seat_save(self, seat: Seat, fields: list[str]) -> None:
        return None  # the seats are inserted as they end up


def _bots(bot_ids: set[int]) -> dict[int, Any]:
    """The seats' bots (their names make the events' player names), in one read."""
    model = Seat._meta.get_field("bot").related_model
    return model.objects.in_bulk(bot_ids)  # type: ignore[union-attr]


def _dealt(game: Game, seats: list[Seat], book: _StartBook) -> None:
    """``game_create_seated``'s events and ``game_start``, on the unsaved rows."""
    for seat in seats:
        steps.event(game, EventKind.JOINED, seat=seat.index, player=seat.player, book=book)
    state = engine.new_game(engine.Options.from_json(game.options), game.seed)
    sync_public(game, state)
    game.status = GameStatus.RUNNING
    game.started_at = clock.now()
    steps.event(game, EventKind.STARTED, players=[s.player for s in seats], book=book)
    steps.after_move(game, state, previous_awaiting=None, mover=None, forfeited=set(),
                     book=book)
    if book.armed and game.status == GameStatus.RUNNING:
        clock_checks.set_deadline(game)


@transaction.atomic
def tables_create_started(
    *,
    user: AbstractBaseUser,
    options: Mapping[str, object],
    tables: Sequence[tuple[int, Sequence[int]]],
    turn_seconds: int,
    max_strikes: int,
    clock_tasks: bool = True,
) -> list[tuple[Game, list[Seat]]]:
    """For each ``(seed, bots)`` of ``tables``: a table with bot ``bots[s]`` in seat ``s``,
    dealt from ``seed`` and started, as ``game_create_seated`` + ``game_start`` make it: its
    row and its seats (their bots with them), in the order of ``tables``.
    ``clock_tasks=False``: schedule no turn-clock task (the caller drives the games and checks
    their clocks itself; the periodic sweep stays the safety net)."""
    parsed = game_services.parse_options(options, seats=len(tables[0][1]) if tables else None)
    bots = _bots({b for _, seated in tables for b in seated})
    now = clock.now()
    made: list[tuple[Game, list[Seat], _StartBook]] = []
    for seed, seated in tables:
        if len(seated) != parsed.players:
            raise ValueError("every table of one call has the same number of seats")
        game = Game(options=parsed.to_json(), seed=seed, turn_seconds=turn_seconds,
                    max_strikes=max_strikes, created_by=user)
        seats = [Seat(game=game, index=i, bot=bots[b], joined_at=now)
                 for i, b in enumerate(seated)]
        book = _StartBook(seats)
        _dealt(game, seats, book)
        made.append((game, seats, book))
    rows.insert_new(Game, [game for game, _, _ in made])  # each given its id
    for game, seats, book in made:
        for seat in seats:
            seat.game_id = game.pk
        for event in book.events:
            event.game_id = game.pk
        for move in book.moves:
            move["game_id"] = move.pop("game").pk
    # Their ids read back: a driver handed these rows writes a seat's strikes by its id.
    rows.insert_new(Seat, [seat for _, seats, _ in made for seat in seats])
    rows.insert_many(GameEvent, [event for _, _, book in made for event in book.events])
    if any(book.moves for _, _, book in made):
        from games.models import MoveRecord

        rows.insert_many(MoveRecord, [m for _, _, book in made for m in book.moves])
    for game, _, book in made:
        notify.announce(game)
        if clock_tasks and book.armed and game.status == GameStatus.RUNNING:
            clock_checks.schedule(game)
    return [(game, seats) for game, seats, _ in made]
