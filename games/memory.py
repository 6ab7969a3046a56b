"""A running game played in memory and recorded whole: for a game whose every seat one
driver plays (all-bot games: tournaments, the bench, a verification game).

``MemoryGame.load(game_id)`` reads the game and its seats once. Its ``play`` (a seat's move),
``default`` (a seat's driver failed it: the default move and a strike, forfeited at the
table's ``max_strikes``) and ``forfeit`` run the very steps of the per-move path
(``games.steps``, which ``games.services`` runs), with a ``MemoryBook`` in place of the
database: the rows they would write are kept. ``stretch_record`` then writes the stretch
played since the load (or the last record) in ONE transaction, with a compare-and-set on the
version it started from: every MoveRecord and GameEvent, the changed seats and the Game row,
exactly the rows the per-move path writes (ids and timestamps aside;
tests/games/test_memory_game.py plays a game both ways).

A driver that dies before recording loses only that stretch: the stored game still stands at
the version the stretch started from, and its turn clock (set when the stretch started) runs
out as for any silent seat. A change someone else made meanwhile (staff abort, the clock's
sweep) makes the record refuse: nothing is written and the caller drops the stretch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from games import clock, clock_checks, notify, rows, steps
from games import services as game_services
from games import uno as engine
from games.book import KeptBook
from games.engine_state import load_state
from games.errors import GameNotRunning, NotAPlayer, NotYourTurn, SeatForfeited
from games.models import Game, GameEvent, GameStatus, MoveRecord, MoveSource, Seat


class MemoryBook(KeptBook):
    """A ``games.book.DatabaseBook`` that keeps the changes for ``stretch_record``."""

    def __init__(self, seats: list[Seat], *, deals: list[dict[str, Any]] | None) -> None:
        super().__init__(seats)
        # The replay's parts, gathered as the game is played (None: not from its first move,
        # the replay is read from the database): every hand's deal, every move's row.
        self.deals = deals
        self.history: list[dict[str, Any]] = []
        self.moves: list[dict[str, Any]] = []
        self.changed: set[int] = set()  # seats whose strikes or forfeit changed

    def sync(self, game: Game, state: engine.GameState) -> None:
        # Only the public facts the rules read; the engine state is encoded once, on record.
        if state.hand_number != game.hand_number and self.deals is not None:
            self.deals.append(engine.full_view(state))  # a new hand: as the replay shows it
        game.awaiting = state.awaiting
        game.hand_number = state.hand_number
        game.scores = state.scores
        game.winner = state.winner

    def announce(self, game: Game) -> None:
        return None  # once, when the stretch is recorded

    def move(self, game: Game, *, number: int, version: int, seat: int, move: Any,
             source: str) -> None:
        # A row, not a model instance: a game's moves are many, and only inserted.
        row = {"game_id": game.pk, "number": number, "version": version, "seat": seat,
               "move": move, "source": source, "created_at": clock.now()}  # when it was made
        self.moves.append(row)
        if self.deals is not None:
            self.history.append(row)

    def seat_save(self, seat: Seat, fields: list[str]) -> None:
        self.changed.add(seat.index)

    def clear(self) -> None:
        self.moves, self.events = [], []
        self.changed = set()
        self.armed = False


class MemoryGame:
    """A game's row, seats and engine state, changed in memory by the steps of
    ``games.services`` (``games.steps``); ``stretch_record`` writes them."""

    def __init__(self, game: Game, seats: list[Seat]) -> None:
        self.game = game
        self.seats = sorted(seats, key=lambda seat: seat.index)
        self.state = load_state(game) if game.state is not None else None
        from_start = self.state is not None and game.move_count == 0
        self.book = MemoryBook(
            self.seats, deals=[engine.full_view(self.state)] if from_start else None)
        self.start_version = game.version  # what the stored row is at (compare-and-set)

    @classmethod
    def load(cls, game_id: int) -> MemoryGame:
        game = Game.objects.get(pk=game_id)
        return cls(game, list(Seat.objects.select_related("user", "bot").filter(game_id=game_id)))

    # --- reading ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.game.status == GameStatus.RUNNING and self.state is not None

    @property
    def awaiting(self) -> int | None:
        """The seat a decision is awaited from (None when over)."""
        return self.game.awaiting if self.running else None

    @property
    def version(self) -> int:
        return self.game.version

    @property
    def pending(self) -> int:
        """Versions played in memory and not yet recorded."""
        return self.game.version - self.start_version

    def view(self, seat: int) -> dict[str, Any]:
        """The seat's view (``games.uno.view``, what the REST view shows)."""
        assert self.state is not None
        return engine.view(self.state, seat)

    def replay(self) -> dict[str, Any] | None:
        """``selectors.game_replay`` of the game once over and recorded, made from what was
        played here (no database read, no replaying); None if this driver did not see the
        game from its first move (read it from the database then)."""
        game, state, deals = self.game, self.state, self.book.deals
        if not game.is_over or state is None or deals is None or self.pending:
            return None
        return {
            "game": game.pk, "status": game.status, "end_reason": game.end_reason,
            "options": game.options, "seed": game.seed,
            "players": [seat.player for seat in self.seats], "winner": game.winner,
            "scores": game.scores,
            "moves": [{"number": row["number"], "seat": row["seat"], "move": row["move"],
                       "source": row["source"], "created_at": row["created_at"]}
                      for row in self.book.history],
            "deals": list(deals), "final": engine.full_view(state),
        }

    # --- changing (as ``games.services``, without the database) -------------------------------
    def play(self, seat: int, move: engine.Move | Mapping[str, object]) -> None:
        """``services.move_play`` for ``seat``, on the current version. Raises as it does:
        MalformedMoveError, IllegalMoveError, NotYourTurn, SeatForfeited, GameNotRunning."""
        parsed = move if isinstance(move, engine.Move) else game_services.parse_move(move)
        if not self.running:
            raise GameNotRunning()
        seat_row = self.book.seats.get(seat)
        if seat_row is None:
            raise NotAPlayer()
        if seat_row.forfeited:
            raise SeatForfeited()
        state = self.state
        assert state is not None
        if seat != state.awaiting and not steps.may_move_out_of_turn(state, seat, parsed):
            raise NotYourTurn(f"It is not your turn (waiting for seat {state.awaiting}).")
        forfeited = self.book.forfeited(self.game)
        previous_awaiting = state.awaiting
        steps.apply_and_record(self.game, state, seat, parsed, MoveSource.PLAYER, self.book)
        steps.after_move(
            self.game, state, previous_awaiting=previous_awaiting, mover=seat,
            move_type=parsed.type, forfeited=forfeited, book=self.book)

    def default(self, seat: int, *, reason: str) -> bool:
        """``services.seat_default``: the seat's driver failed it (``reason``): its default
        move and a strike. False, changing nothing, if the seat is not awaited."""
        if not self.running or self.game.awaiting != seat:
            return False
        steps.turn_clock_run(self.game, source=MoveSource.SERVER, reason=reason,
                             state=self.state, book=self.book)
        return True

    def forfeit(self, seat: int, *, reason: str = steps.FORFEIT_DISABLED) -> None:
        """``services.seats_forfeit`` for one seat: it is forfeited now (a disabled bot)."""
        if not self.running:
            raise GameNotRunning()
        row = self.book.seats[seat]
        if row.forfeited:
            return
        steps.forfeit(self.game, row, self.book, reason=reason)
        if not self.game.is_over:
            state = self.state
            assert state is not None
            steps.after_move(self.game, state, previous_awaiting=state.awaiting, mover=None,
                             book=self.book)


def stretch_record(*, played: MemoryGame) -> bool:
    """Write what ``played`` did since it was loaded (or last recorded), in one transaction:
    the game row (compare-and-set on the version the stretch started from), its moves, events
    and changed seats. False, with nothing written, if the stored game moved on meanwhile:
    the caller drops the stretch (and the game's in-memory state with it)."""
    return stretches_record(played=[played])[0]


def stretches_record(*, played: Sequence[MemoryGame]) -> list[bool]:
    """``stretch_record`` for several games in ONE transaction, their moves and events in one
    insert each: a driver whose games end while it is recording records them together, so a
    game's share of the commit and the statements shrinks as the load grows. Each game's
    compare-and-set is its own: one that moved on is left out (False), the others written.
    The games' stretches are dropped from memory only once the transaction has committed: a
    failed commit leaves them whole, to be recorded again."""
    with transaction.atomic():
        out: list[bool] = []
        moves: list[dict[str, Any]] = []
        events: list[GameEvent] = []
        written: list[MemoryGame] = []
        for one in played:
            recorded = _stretch_game(one)
            out.append(recorded)
            if recorded:
                moves.extend(one.book.moves)
                events.extend(one.book.events)
                written.append(one)
        rows.insert_many(MoveRecord, moves)
        rows.insert_many(GameEvent, events)
    for one in written:
        one.book.clear()
        one.start_version = one.game.version
    return out


def _stretch_game(played: MemoryGame) -> bool:
    """One game's part of ``stretches_record`` but its moves and events: the row
    (compare-and-set), the changed seats, the announcement and the clock's check."""
    book, game = played.book, played.game
    if game.version == played.start_version:
        return True  # nothing happened
    if played.state is not None:  # the engine state, encoded once (the public facts are kept)
        data = played.state.to_json()
        game.rng = data.pop("rng")
        game.state = data
    running = game.status == GameStatus.RUNNING
    if book.armed and running:
        clock_checks.set_deadline(game)
    if not rows.game_save_if(game, expected_version=played.start_version):
        return False
    for index in sorted(book.changed):
        seat = book.seats[index]
        Seat.objects.filter(pk=seat.pk).update(strikes=seat.strikes, forfeited=seat.forfeited)
    notify.announce(game)
    if book.armed and running:
        clock_checks.schedule(game)
    return True
