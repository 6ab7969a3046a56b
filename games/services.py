"""Everything that changes a game in the database: the verbs the API, the turn clock and the
bot runner call. Each is one transaction, so nothing is ever half-written, made of the steps in
``games.steps`` (which ``games.memory`` and ``games.batch`` run too, without the lock).

Serialisation: every write locks the game row (``select_for_update``) first, and a move also
compares the client's version, so two racing requests can never both apply a move.

Every change bumps ``Game.version`` by one and is recorded under that version (see
``games.steps``); a plain move may skip the lock for a compare-and-set on that version
(``move_play``'s ``seen``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from rest_framework.exceptions import ValidationError

from games import clock, clock_checks, hooks, notify, rows, steps
from games import uno as engine
from games.engine_state import load_state, sync_public
from games.errors import (
    AlreadySeated,
    GameFull,
    GameNotOpen,
    GameNotRunning,
    InvalidOptions,
    MalformedMoveError,
    NotAPlayer,
    NotCreator,
    NotYourTurn,
    SeatForfeited,
    SeatsOpen,
    SeatTaken,
    StaleVersion,
    TooManyOpenTables,
)
from games.models import (
    DEFAULT_MAX_STRIKES,
    DEFAULT_TURN_SECONDS,
    EventKind,
    Game,
    GameStatus,
    MoveRecord,
    MoveSource,
    Seat,
)


# --- helpers ----------------------------------------------------------------------------------
def _lock(game_id: int) -> Game:
    return rows.game_locked(game_id)


# --- tables -----------------------------------------------------------------------------------
def parse_options(options: Mapping[str, object], *, seats: int | None = None) -> engine.Options:
    """Engine-validated options; ``seats`` (if given) sets ``players``."""
    if not isinstance(options, Mapping):  # JSON, but a list, a string, a number...
        raise InvalidOptions("options", "must be a JSON object")
    data = dict(options)
    if seats is not None:
        if "players" in data and data["players"] != seats:
            raise InvalidOptions("players", f"must equal seats ({seats}) when both are given")
        data["players"] = seats
    try:
        return engine.Options.from_json(data)
    except engine.OptionsError as exc:
        raise InvalidOptions(exc.field, exc.reason) from None


@transaction.atomic
def game_create(
    *,
    user: AbstractBaseUser,
    options: Mapping[str, object],
    seats: int | None = None,
    turn_seconds: int = DEFAULT_TURN_SECONDS,
    max_strikes: int = DEFAULT_MAX_STRIKES,
    join: bool = True,
) -> Game:
    parsed = parse_options(options, seats=seats)
    _open_tables_check(user)
    game = Game.objects.create(
        options=parsed.to_json(),
        # 63 bits: fits a signed bigint column; the engine takes any int.
        seed=secrets.randbits(63),
        turn_seconds=turn_seconds,
        max_strikes=max_strikes,
        created_by=user,
    )
    # The creator sits down with the table's making: seat 0, no seats to look through.
    creator = {"user": user, "joined_at": clock.now()} if join else {}
    Seat.objects.bulk_create(
        Seat(game=game, index=i, **(creator if i == 0 else {})) for i in range(parsed.players)
    )
    if join:
        steps.event(game, EventKind.JOINED, seat=0, player=user.get_username())
        rows.game_save(game)
    return game


@transaction.atomic
def game_create_seated(
    *,
    user: AbstractBaseUser,
    options: Mapping[str, object],
    seed: int,
    bots: Sequence[int],
    turn_seconds: int = DEFAULT_TURN_SECONDS,
    max_strikes: int = DEFAULT_MAX_STRIKES,
) -> Game:
    """A table with bot ``bots[s]`` in seat ``s``, dealt from ``seed``: a tournament's game
    (the arena vetted its bots; replaying the tournament's seed replays it). Not counted
    against ``user``'s open tables: its creator starts it at once."""
    parsed = parse_options(options, seats=len(bots))
    game = Game.objects.create(
        options=parsed.to_json(), seed=seed, turn_seconds=turn_seconds,
        max_strikes=max_strikes, created_by=user,
    )
    now = clock.now()
    Seat.objects.bulk_create(
        Seat(game=game, index=i, bot_id=bot, joined_at=now) for i, bot in enumerate(bots)
    )
    for seat in game.seats.select_related("bot"):
        steps.event(game, EventKind.JOINED, seat=seat.index, player=seat.player)
    rows.game_save(game)
    return game


@transaction.atomic
def seats_forfeit(*, game_id: int, reasons: Mapping[int, str]) -> Game:
    """Forfeit a running game's seats now, all at once (a tournament's disabled or
    unresponsive bots: seat -> the event's reason): the server plays them from here on, and
    with fewer than two seats in play the game ends. All at once: forfeited one by one, the
    last of them would be the last one standing, and win."""
    game = _lock(game_id)
    if game.status != GameStatus.RUNNING:
        raise GameNotRunning()
    rows_by_index = {row.index: row for row in game.seats.all()}
    for seat, reason in sorted(reasons.items()):
        if not rows_by_index[seat].forfeited:
            steps.forfeit(game, rows_by_index[seat], reason=reason, settle=False)
    steps.forfeits_settle(game)
    if not game.is_over:
        state = load_state(game)
        steps.after_move(game, state, previous_awaiting=state.awaiting, mover=None)
    rows.game_save(game)
    return game


def _open_tables_check(user: AbstractBaseUser) -> None:
    """Refuse a table beyond ``GAMES_MAX_OPEN_TABLES`` open ones of the same creator: one user
    made 20,000 tables in 130 s, and the lobby was nothing else. The user's row is locked so
    that a burst of concurrent creations is counted one at a time."""
    get_user_model().objects.select_for_update().values_list("pk", flat=True).get(pk=user.pk)
    open_tables = Game.objects.filter(created_by=user, status=GameStatus.OPEN).count()
    if open_tables >= settings.GAMES_MAX_OPEN_TABLES:
        raise TooManyOpenTables()


def _seat_take(
    game: Game, user: AbstractBaseUser, index: int | None, bot_id: int | None = None
) -> Seat:
    seats = rows.seats_of(game.pk)  # one read, judged here
    if bot_id is not None:
        # The bot is the player: its owner may sit too, in another seat (one seat per bot).
        if any(s.bot_id == bot_id for s in seats):
            raise AlreadySeated("That bot already has a seat in this game.")
    elif any(s.user_id == user.pk for s in seats):
        raise AlreadySeated()
    if index is not None:
        seat = next((s for s in seats if s.index == index), None)
        if seat is None:  # the request names what the table does not have: a bad value
            raise ValidationError({"seat": [f"This table's seats are 0 to {len(seats) - 1}."]})
        if seat.is_taken:
            raise SeatTaken()
    else:
        seat = next((s for s in seats if not s.is_taken), None)
        if seat is None:
            raise GameFull()
    if bot_id is not None:
        seat.bot_id = bot_id
    else:
        seat.user = user
    seat.joined_at = clock.now()
    seat.save(update_fields=["user", "bot", "joined_at"])
    steps.event(game, EventKind.JOINED, seat=seat.index, player=seat.player)
    return seat


@transaction.atomic
def seat_join(
    *, game_id: int, user: AbstractBaseUser, index: int | None = None, bot_id: int | None = None
) -> Seat:
    """Take a seat for ``user``, or for their bot ``bot_id`` (``hooks.check_seat`` decides
    whether they may seat it; the server then drives that seat)."""
    if bot_id is not None:
        hooks.check_seat(user, bot_id)
    game = _lock(game_id)
    if game.status != GameStatus.OPEN:
        raise GameNotOpen()
    seat = _seat_take(game, user, index, bot_id)
    rows.game_save(game)
    return seat


@transaction.atomic
def seat_leave(*, game_id: int, user: AbstractBaseUser, bot_id: int | None = None) -> Game:
    """Give up a seat before the start (``bot_id``: take your bot off its seat). When the
    last player leaves, the table is aborted."""
    if bot_id is not None:
        hooks.check_seat(user, bot_id)
    game = _lock(game_id)
    seat = (game.seats.filter(bot_id=bot_id) if bot_id is not None
            else game.seats.filter(user=user)).first()
    if seat is None:
        raise NotAPlayer()
    if game.status != GameStatus.OPEN:
        raise GameNotOpen("You can only leave before the game starts.")
    player = seat.player
    seat.user = None
    seat.bot = None
    seat.joined_at = None
    seat.save(update_fields=["user", "bot", "joined_at"])
    steps.event(game, EventKind.LEFT, seat=seat.index, player=player)
    if not game.seats.filter(Q(user__isnull=False) | Q(bot__isnull=False)).exists():
        steps.finish(game, reason="abandoned", status=GameStatus.ABORTED)
    rows.game_save(game)
    return game


@transaction.atomic
def game_start(*, game_id: int, user: AbstractBaseUser) -> Game:
    """Deal. Only the creator may start, and only with every seat taken: a table's size is
    fixed at creation (the engine deals for ``players`` seats)."""
    game = _lock(game_id)
    if game.created_by_id != user.pk:
        raise NotCreator()
    if game.status != GameStatus.OPEN:
        raise GameNotOpen()
    seats = list(game.seats.select_related("user", "bot"))  # one read for all that follows
    if not all(s.is_taken for s in seats):
        raise SeatsOpen()
    state = engine.new_game(engine.Options.from_json(game.options), game.seed)
    sync_public(game, state)
    game.status = GameStatus.RUNNING
    game.started_at = clock.now()
    steps.event(game, EventKind.STARTED, players=[s.player for s in seats])
    steps.after_move(game, state, previous_awaiting=None, mover=None,
                     forfeited={s.index for s in seats if s.forfeited})
    rows.game_save(game)
    return game


@transaction.atomic
def game_abort(*, game_id: int, reason: str = "staff") -> Game:
    """End an open or running game with no winner: ``reason`` "staff" (from the admin: a stuck
    or unwanted table), or "interrupted" (a tournament's game cut off by its worker's end,
    dealt again in a new game). Like any change it bumps the version, so waiting players wake
    and see it over, and its replay becomes readable."""
    game = _lock(game_id)
    if game.is_over:
        raise GameNotRunning("The game is already over.")
    steps.finish(game, reason=reason, status=GameStatus.ABORTED)
    rows.game_save(game)
    return game


# --- moves ------------------------------------------------------------------------------------
def parse_move(data: object) -> engine.Move:
    try:
        return engine.Move.from_json(data)
    except engine.MalformedMove as exc:
        raise MalformedMoveError(exc.reason) from None


@dataclass(frozen=True)
class MovePlayed:
    """An applied move with the game and engine state right after it (no need to reload)."""

    record: MoveRecord
    game: Game
    state: engine.GameState


@dataclass(frozen=True)
class MovePrepared(MovePlayed):
    """A move applied in memory only (``move_prepare``), for ``move_commit``."""

    rng_changed: bool = False
    new_turn: bool = False


def move_play(
    *,
    game_id: int,
    seat: int,
    move: engine.Move | Mapping[str, object],
    expected_version: int | None,
    source: str = MoveSource.PLAYER,
    seen: Game | None = None,
    player: object | None = None,
) -> MovePlayed:
    """Play ``move`` for ``seat``: the one entry point for API players, the clock and bots.

    ``expected_version`` is the version the caller decided on; None skips the check (server
    moves made under the lock). Raises StaleVersion, NotYourTurn, IllegalMoveError, ...

    ``player`` is the id of the user the seat must belong to (an API move): the caller found
    the seat by that user, maybe before a change of seats, so the locked path checks again.

    ``seen`` is the game as the caller just read it (unlocked) together with the seat, with
    ``forfeited_seats`` counted. When it is at ``expected_version`` and the move is a plain
    one, the move is written with a single compare-and-set instead of locking and reading the
    game again: every change of seats bumps the version, so the seat still is the player's.
    """
    parsed = move if isinstance(move, engine.Move) else parse_move(move)
    if seen is not None and expected_version is not None:
        played = _move_play_compare_and_set(seen, seat, parsed, expected_version, source)
        if played is not None:
            return played
    outcome = _move_play_locked(
        game_id=game_id, seat=seat, move=parsed, expected_version=expected_version,
        source=source, player=player,
    )
    if isinstance(outcome, StaleVersion):
        raise outcome  # raised after the commit: the overdue clock's move stands
    return outcome


def _move_play_compare_and_set(
    game: Game, seat: int, move: engine.Move, expected_version: int, source: str
) -> MovePlayed | None:
    """The common case in one statement: a move that ends nothing, in a game with no
    forfeited seat and no overdue clock, decided on the version ``game`` was read at, written
    only if the stored game is still at that version (compare-and-set). None: not a plain
    move, or a lost race; the locked path then answers with authority (a refusal judged on an
    unlocked read could be stale, and a 409 carries the current version)."""
    prepared = move_prepare(game, seat, move, expected_version, source)
    return None if prepared is None else move_commit(prepared)


def move_prepare(
    game: Game, seat: int, move: engine.Move, expected_version: int, source: str
) -> MovePrepared | None:
    """The compare-and-set path's work in memory: ``game`` (as ``seen`` in ``move_play``)
    and its engine state become the move's result, nothing is written; ``move_commit``
    writes it. None (and ``game`` is spoilt): not a plain move, ``move_play`` decides it."""
    plain_table = (
        game.status == GameStatus.RUNNING
        and game.forfeited_seats == 0
        and game.version == expected_version
        and not steps.turn_clock_overdue(game)
    )
    if not plain_table:
        return None
    state = load_state(game)
    previous_awaiting = state.awaiting
    if seat != previous_awaiting and not steps.may_move_out_of_turn(state, seat, move):
        return None
    try:
        engine.apply(state, seat, move)
    except engine.IllegalMove:
        return None
    if state.finished:
        return None
    rng_changed = sync_public(game, state)
    game.move_count += 1
    game.version += 1
    new_turn = steps.turn_changed(
        state, previous_awaiting=previous_awaiting, mover=seat, move_type=move.type
    )
    if new_turn:
        clock_checks.set_deadline(game)
    record = rows.new_move_record(
        game, number=game.move_count, version=game.version, seat=seat, move=move.to_json(),
        source=source,
    )
    return MovePrepared(record=record, game=game, state=state, rng_changed=rng_changed,
                        new_turn=new_turn)


def move_commit(prepared: MovePrepared) -> MovePlayed | None:
    """Write a ``move_prepare``d move if the stored game is still at the version before it;
    None, with nothing written, if it moved on (``move_play`` then answers with authority)."""
    game = prepared.game
    if not rows.move_commit(game, prepared.record, expected_version=game.version - 1,
                            rng_changed=prepared.rng_changed):
        return None
    # Outside a transaction this runs at once, inside one (an Idempotency-Key) on its commit:
    # either way after the write (which remembered the row the same way).
    notify.announce(game)
    if prepared.new_turn:
        clock_checks.schedule(game)
    return prepared


@transaction.atomic
def _move_play_locked(
    *,
    game_id: int,
    seat: int,
    move: engine.Move,
    expected_version: int | None,
    source: str,
    player: object | None,
) -> MovePlayed | StaleVersion:
    game = _lock(game_id)
    if steps.turn_clock_overdue(game):
        # The clock ran out before this move arrived: its default move comes first, and this
        # move, decided on the older version, is stale.
        steps.turn_clock_run(game)
        return StaleVersion(game.version)
    if game.status != GameStatus.RUNNING:
        raise GameNotRunning()
    if expected_version is not None and expected_version != game.version:
        raise StaleVersion(game.version, expected_version)
    seats = rows.seats_of(game_id)
    seat_row = next((s for s in seats if s.index == seat), None)
    if seat_row is None or (player is not None and seat_row.user_id != player):
        raise NotAPlayer()
    if source == MoveSource.PLAYER and seat_row.forfeited:
        raise SeatForfeited()
    state = load_state(game)
    if seat != state.awaiting and not steps.may_move_out_of_turn(state, seat, move):
        raise NotYourTurn(f"It is not your turn (waiting for seat {state.awaiting}).")
    forfeited = {s.index for s in seats if s.forfeited}
    record = _apply(game, state, seat, move, source, forfeited=forfeited)
    return MovePlayed(record=record, game=game, state=state)


def _apply(
    game: Game,
    state: engine.GameState,
    seat: int,
    move: engine.Move,
    source: str,
    *,
    forfeited: set[int],
) -> MoveRecord:
    previous_awaiting = state.awaiting
    record = steps.apply_and_record(game, state, seat, move, source)
    steps.after_move(game, state, previous_awaiting=previous_awaiting, mover=seat,
                     move_type=move.type, forfeited=forfeited)
    rows.game_save(game)
    return record


# --- turn clock -------------------------------------------------------------------------------
def turn_clock_enforce(*, game_id: int) -> bool:
    """If the awaited seat's time ran out, play its default move (source ``clock``) and give
    it a strike; at ``max_strikes`` the seat is forfeited. Returns whether a move was made.

    Called lazily on every read and write of a game and by a Celery task at the deadline; the
    first to get the lock does the work, the others see a fresh deadline and do nothing. A
    game a driver plays somewhere (``hooks.driven_games``: a tournament's) is left alone.
    """
    if not _stored_clock_overdue(game_id):
        return False
    if hooks.is_driven_anywhere(game_id):
        # Its stored clock is not its real one: its driver enforces it in memory, and if that
        # driver died, the one that takes it over settles the game (arena: aborted, dealt again).
        return False
    return _turn_clock_enforce_locked(game_id)


def turn_clock_sweep() -> int:
    """Settle the clock of every running game whose turn is overdue (the safety net behind
    each turn's own scheduled check), but those a driver plays somewhere (a tournament's
    games in flight: ``hooks.driven_games``); how many games it moved on."""
    overdue = list(Game.objects.filter(
        status=GameStatus.RUNNING, turn_deadline__lt=clock.now()
    ).values_list("id", flat=True))
    if overdue:  # asked once per sweep, and only then (most sweeps find nothing overdue)
        driven = hooks.driven_games()
        overdue = [game_id for game_id in overdue if game_id not in driven]
    # A game not driven now never will be (a driver's games are noted as it creates them),
    # so each need not be asked again, as turn_clock_enforce would.
    return sum(_stored_clock_overdue(game_id) and _turn_clock_enforce_locked(game_id)
               for game_id in overdue)


def _stored_clock_overdue(game_id: int) -> bool:
    """Whether the stored game runs with its turn's deadline passed (one unlocked read)."""
    deadline = Game.objects.filter(pk=game_id).values_list("status", "turn_deadline").first()
    if deadline is None or deadline[0] != GameStatus.RUNNING or deadline[1] is None:
        return False
    return bool(deadline[1] <= clock.now())


@transaction.atomic
def _turn_clock_enforce_locked(game_id: int) -> bool:
    game = _lock(game_id)
    if not steps.turn_clock_overdue(game):
        return False
    steps.turn_clock_run(game)
    return True


@transaction.atomic
def seat_default(*, game_id: int, seat: int, expected_version: int, reason: str) -> bool:
    """The seat's driver failed it at ``expected_version`` (a bot's call failed for
    ``reason``): play its default move and strike it, as the turn clock does for a silent
    player. False, changing nothing, if the game moved on since (or the seat is not awaited):
    a stale failure costs nothing."""
    game = _lock(game_id)
    if steps.turn_clock_overdue(game):
        steps.turn_clock_run(game)
        return False
    if game.status != GameStatus.RUNNING or game.version != expected_version:
        return False
    if game.awaiting != seat:
        return False
    steps.turn_clock_run(game, source=MoveSource.SERVER, reason=reason)
    return True
