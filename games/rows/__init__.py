"""Hand-written SQL for the game rows every move and every long-poll wake-up touches.

Profiling a move (see bench/api.py) showed Django spending more time compiling its ORM queries
than the database spent running them. These few statements are therefore written out once,
from the models' own table and column names, and the rows become ordinary model instances
with the same converters the ORM applies. Everything else (lists, the admin, creating and
joining tables, the clock's rare paths) stays on the ORM.

* Reads: the locked game, its seats, a user's seat with its game (``seat_with_game``).
* Writes: a whole game row (``game_save``), and a plain move as one compare-and-set statement
  (``move_commit``: the game's update guarded by its version, and the move's insert).
* Recall: the rows this process last read or wrote, reused when a caller names the version it
  wants (``games.recent.Recent``).
* The stream's reads: the horizon, the followed games' event rows and the user's latest seats,
  in one snapshot (``stream_events``).
* Many new rows at once (``insert_many``, ``insert_new``: ``games.rows.bulk``).
* Percentiles of each group's newest rows, for many groups at once (``newest_percentiles``:
  ``games.rows.newest``; PostgreSQL only).

The SQL is portable: PostgreSQL gets ``FOR UPDATE``; SQLite needs none, since its
transactions are IMMEDIATE (see settings) and so already serialise writers. On PostgreSQL these
statements are also prepared once per connection (``DB_PREPARED_STATEMENTS``): the parameters
travel apart from the SQL, so a move's engine state is neither quoted into the statement by
psycopg nor parsed out of it by the server, and the statement is not planned again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.utils import timezone

from core.postgresql.prepared import prepared_cursor as _cursor
from games.models import Game, GameEvent, MoveRecord, Seat
from games.recent import (
    GAME_FIELDS,
    JSON_FIELDS,
    game_from_notified,
    json_text,
    recent,
    remember_written,
    seat_from_records,
)
from games.rows.bulk import insert_many as insert_many  # re-exported: callers use games.rows
from games.rows.bulk import insert_new as insert_new
from games.rows.newest import newest_percentiles as newest_percentiles

M = TypeVar("M", bound=models.Model)
Converter = Callable[[Any, Any, Any], Any]


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _select_list(model: type[models.Model], alias: str) -> str:
    return ", ".join(f"{alias}.{_q(f.column)}" for f in model._meta.concrete_fields)


@cache
def _converters(
    model: type[models.Model], vendor: str
) -> tuple[tuple[tuple[Converter, ...], Any], ...]:
    """Per column, the converters the ORM would apply to a fetched value (JSON decoding,
    SQLite's datetimes and booleans, ...) and the column expression they are given."""
    table = model._meta.db_table
    result = []
    for field in model._meta.concrete_fields:
        column = field.get_col(table)
        converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        result.append((tuple(converters), column))
    return tuple(result)


def _instance(model: type[M], values: Sequence[Any]) -> M:
    """A model instance from one row in ``concrete_fields`` order, as the ORM builds it."""
    return model.from_db(connection.alias, None, list(_converted(model, values)))


# --- reads ------------------------------------------------------------------------------------
@cache
def _game_locked_sql(vendor: str) -> str:
    table = _q(Game._meta.db_table)
    sql = f"SELECT {_select_list(Game, 'g')} FROM {table} g WHERE g.{_q('id')} = %s"
    return sql + " FOR UPDATE" if vendor == "postgresql" else sql


def game_locked(game_id: int) -> Game:
    """The game row, locked until the transaction ends (the caller is in one)."""
    with _cursor() as cursor:
        cursor.execute(_game_locked_sql(connection.vendor), [game_id])
        row = cursor.fetchone()
    if row is None:
        raise Game.DoesNotExist(f"No game {game_id}.")
    return _instance(Game, row)


@cache
def _seats_sql(vendor: str) -> str:
    seat = Seat._meta
    game_id = _q(seat.get_field("game").column)
    return (
        f"SELECT {_select_list(Seat, 's')} FROM {_q(seat.db_table)} s "
        f"WHERE s.{game_id} = %s ORDER BY s.{_q('index')}"
    )


def seats_of(game_id: int) -> list[Seat]:
    with _cursor() as cursor:
        cursor.execute(_seats_sql(connection.vendor), [game_id])
        return [_instance(Seat, row) for row in cursor.fetchall()]


@cache
def _seat_with_game_sql(vendor: str) -> str:
    seat, game = Seat._meta, Game._meta
    seat_table = _q(seat.db_table)
    game_id, user_id = _q(seat.get_field("game").column), _q(seat.get_field("user").column)
    forfeited = _q(seat.get_field("forfeited").column)
    return (
        f"SELECT {_select_list(Seat, 's')}, {_select_list(Game, 'g')}, "
        f"(SELECT COUNT(*) FROM {seat_table} f WHERE f.{game_id} = s.{game_id} "
        f"AND f.{forfeited}) "
        f"FROM {seat_table} s JOIN {_q(game.db_table)} g ON g.{_q('id')} = s.{game_id} "
        f"WHERE s.{game_id} = %s AND s.{user_id} = %s"
    )


def seat_with_game(game_id: int, user_id: object, *, version: int | None = None) -> Seat | None:
    """The user's seat at the game with the game attached (one query), or None. The game's
    ``forfeited_seats`` says how many of its seats are forfeited.

    With ``version``, a row this process read or wrote at that version is reused instead
    (see ``games.recent.Recent``): only for callers that name the version they want and can
    live with it being older than the newest one.
    """
    if version is not None:
        recalled = recent.recall(game_id, user_id, version)
        if recalled is not None:
            return recalled
    with _cursor() as cursor:
        cursor.execute(_seat_with_game_sql(connection.vendor), [game_id, user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(Seat._meta.concrete_fields)
    seat_values = _converted(Seat, row[:width])
    game_record = _converted(Game, row[width:-1], keep=JSON_FIELDS)  # JSON stays text
    forfeited = int(row[-1])
    if not connection.in_atomic_block:  # committed: safe to remember
        recent.remember_read(game_id, user_id, seat_values, game_record, forfeited)
    return seat_from_records(seat_values, game_record, forfeited)


def recalled_game(game_id: int, version: int) -> Game | None:
    """The game's committed row at ``version`` if this process holds it (it wrote or read it
    last: see ``games.recent.Recent``), without the database; None otherwise. Safe on an
    event loop."""
    return recent.recall_game(game_id, version)


def game_heard(game_id: int, version: int, row_text: str | None) -> Game | None:
    """The game's row at ``version`` without the database: kept by this process
    (``recalled_game``) or carried by the NOTIFY that told of it (``row_text``); None if
    neither. For a seat's view only (see ``notified_game``). Safe on an event loop."""
    game = recalled_game(game_id, version)
    if game is None and row_text is not None:
        game = notified_game(row_text)
    return game if game is not None and game.version == version else None


def notified_game(row_text: str) -> Game:
    """The game a NOTIFY carried (``recent.game_from_notified``), without the database: for a
    seat's view only. Safe on an event loop."""
    return game_from_notified(row_text)


@dataclass(frozen=True)
class PublicSeat:
    index: int
    user_id: int | None
    player: str | None  # the user's name
    strikes: int
    forfeited: bool


@cache
def _game_public_sql(vendor: str) -> str:
    # Assumes the user model keeps its username in its own table, as Django's User does (the
    # accounts app's model): a multi-table child would need a join to its parent.
    seat, user = Seat._meta, get_user_model()._meta
    users, name = _q(user.db_table), _q(user.get_field(get_user_model().USERNAME_FIELD).column)
    user_id, user_key = _q(seat.get_field("user").column), _q(user.pk.column)
    creator = _q(Game._meta.get_field("created_by").column)
    # A seat a bot drives shows "bot:<name>" (the bots app's table, reached through the FK).
    bot_field = seat.get_field("bot")
    bots, bot_id = _q(bot_field.related_model._meta.db_table), _q(bot_field.column)
    player = f"COALESCE(u.{name}, 'bot:' || b.{_q('name')})"
    return (
        f"SELECT {_select_list(Game, 'g')}, c.{name}, s.{_q('index')}, s.{user_id}, {player}, "
        f"s.{_q('strikes')}, s.{_q('forfeited')} "
        f"FROM {_q(Game._meta.db_table)} g LEFT JOIN {users} c ON c.{user_key} = g.{creator} "
        f"JOIN {_q(seat.db_table)} s ON s.{_q(seat.get_field('game').column)} = g.{_q('id')} "
        f"LEFT JOIN {users} u ON u.{user_key} = s.{user_id} "
        f"LEFT JOIN {bots} b ON b.{_q('id')} = s.{bot_id} "
        f"WHERE g.{_q('id')} = %s ORDER BY s.{_q('index')}"
    )


def game_public(game_id: int) -> tuple[Game, str | None, list[PublicSeat]]:
    """A game with its creator's name and its seats with their players' names (one query):
    what a table's public description shows."""
    with _cursor() as cursor:
        cursor.execute(_game_public_sql(connection.vendor), [game_id])
        found = cursor.fetchall()
    if not found:
        raise Game.DoesNotExist(f"No game {game_id}.")
    width = len(GAME_FIELDS)
    game = _instance(Game, found[0][:width])
    seats = [
        PublicSeat(index, user_id, player, strikes, bool(forfeited))
        for (index, user_id, player, strikes, forfeited) in (row[width + 1:] for row in found)
    ]
    return game, found[0][width], seats


# --- converting rows --------------------------------------------------------------------------
def _converted(
    model: type[models.Model], values: Sequence[Any], *, keep: frozenset[int] = frozenset()
) -> tuple[Any, ...]:
    """A row's values as the ORM converts them, but for the columns numbered in ``keep``."""
    converted = []
    for i, (value, (converters, column)) in enumerate(
        zip(values, _converters(model, connection.vendor), strict=True)
    ):
        if i not in keep:
            for convert in converters:
                value = convert(value, column, connection)
        converted.append(value)
    return tuple(converted)


# --- writes -----------------------------------------------------------------------------------
# What a plain move changes (``services._move_play_compare_and_set``); the rest of the row is
# left alone, so it is neither re-encoded nor re-sent.
MOVE_COLUMNS = (
    "state", "version", "move_count", "awaiting", "hand_number", "scores", "winner",
    "turn_deadline", "updated_at",
)


@cache
def _game_update_sql(
    vendor: str, names: tuple[str, ...] | None = None
) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    """UPDATE of the named fields (all but the key when None) of one game row."""
    fields = tuple(
        f for f in Game._meta.concrete_fields
        if not f.primary_key and (names is None or f.name in names)
    )
    if names is not None and len(fields) != len(names):
        raise ValueError(f"not all of {names} are columns of {Game._meta.db_table}")
    assignments = ", ".join(f"{_q(f.column)} = %s" for f in fields)
    return f"UPDATE {_q(Game._meta.db_table)} SET {assignments} WHERE {_q('id')} = %s", fields


def game_save(game: Game) -> None:
    """Write every column of an existing game row (what ``game.save()`` does, uncompiled)."""
    sql, fields = _game_update_sql(connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(game, False), connection) for f in fields]
    with _cursor() as cursor:
        cursor.execute(sql, [*params, game.pk])


def game_save_if(game: Game, *, expected_version: int) -> bool:
    """``game_save``, only if the stored row is still at ``expected_version``
    (compare-and-set); False, with nothing written, if it moved on."""
    sql, fields = _game_update_sql(connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(game, False), connection) for f in fields]
    with _cursor() as cursor:
        cursor.execute(f"{sql} AND {_q('version')} = %s", [*params, game.pk, expected_version])
        return cursor.rowcount == 1


@cache
def _move_insert_sql(vendor: str) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    fields = tuple(f for f in MoveRecord._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(_q(f.column) for f in fields)
    values = ", ".join("%s" for _ in fields)
    sql = f"INSERT INTO {_q(MoveRecord._meta.db_table)} ({columns}) VALUES ({values})"
    return sql + f" RETURNING {_q('id')}", fields


def new_move_record(
    game: Game, *, number: int, version: int, seat: int, move: Any, source: str
) -> MoveRecord:
    """``MoveRecord(game=game, ...)``, built the ORM's fast way (values in column order): the
    keyword form, through the game's descriptor, cost more than the rest of the record."""
    record = MoveRecord(None, game.pk, number, version, seat, move, source, None)
    MoveRecord.game.field.set_cached_value(record, game)
    return record


_MOVE_JSON = [f.name for f in MoveRecord._meta.concrete_fields if not f.primary_key].index("move")


def move_insert(record: MoveRecord) -> MoveRecord:
    """Insert a new move record (what ``record.save()`` does, uncompiled); sets its id."""
    sql, fields = _move_insert_sql(connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(record, True), connection) for f in fields]
    with _cursor() as cursor:
        cursor.execute(sql, params)
        (record.pk,) = cursor.fetchone()
    return _saved(record)


def _saved(record: MoveRecord) -> MoveRecord:
    """Mark a record inserted by hand as the ORM marks one it saved."""
    record._state.adding = False
    record._state.db = connection.alias
    return record


@cache
def _move_commit_sql(vendor: str, columns: tuple[str, ...]) -> str:
    """PostgreSQL: the compare-and-set update of the game and the move's insert in one
    statement (no transaction round trips): no row updated, nothing inserted."""
    update, _ = _game_update_sql(vendor, columns)
    _, move_fields = _move_insert_sql(vendor)
    columns = ", ".join(_q(f.column) for f in move_fields)
    values = ", ".join("%s" for _ in move_fields)
    return (
        f"WITH cas AS ({update} AND {_q('version')} = %s RETURNING {_q('id')}) "
        f"INSERT INTO {_q(MoveRecord._meta.db_table)} ({columns}) SELECT {values} FROM cas "
        f"RETURNING {_q('id')}"
    )


def move_commit(
    game: Game, record: MoveRecord, *, expected_version: int, rng_changed: bool
) -> bool:
    """Write ``game``'s ``MOVE_COLUMNS`` (and its ``rng`` if changed) and insert ``record`` if
    the stored game still has ``expected_version`` (compare-and-set); False, with nothing
    written, if it moved on. Atomic on its own. Once written, the row is remembered (see
    ``games.recent.Recent``): a plain move changes no seat, and the game has no forfeited seat."""
    columns = (*MOVE_COLUMNS, "rng") if rng_changed else MOVE_COLUMNS
    update, game_fields = _game_update_sql(connection.vendor, columns)
    if connection.vendor != "postgresql":
        game_params = [
            f.get_db_prep_save(f.pre_save(game, False), connection) for f in game_fields
        ]
        with transaction.atomic():
            with _cursor() as cursor:
                cursor.execute(
                    f"{update} AND {_q('version')} = %s", [*game_params, game.pk, expected_version]
                )
                if cursor.rowcount != 1:
                    return False
            move_insert(record)
        remember_written(game, previous=expected_version, encoded={})
        return True
    # psycopg adapts these Python values itself (Django's per-field preparation cost more than
    # the statement), and each JSON column is encoded once, for the statement and the memory.
    game.updated_at = timezone.now()  # auto_now
    encoded = {
        f.name: None if (value := getattr(game, f.attname)) is None else json_text(f, value)
        for f in game_fields if isinstance(f, models.JSONField)
    }  # None: SQL NULL, as the ORM writes it
    game_params = [encoded.get(f.name, getattr(game, f.attname)) for f in game_fields]
    record.created_at = game.updated_at  # auto_now_add
    move_params = [getattr(record, f.attname) for f in _move_insert_sql(connection.vendor)[1]]
    move_params[_MOVE_JSON] = json_text(MoveRecord._meta.get_field("move"), record.move)
    with _cursor() as cursor:
        cursor.execute(
            _move_commit_sql(connection.vendor, columns),
            [*game_params, game.pk, expected_version, *move_params],
        )
        row = cursor.fetchone()
    if row is None:
        return False
    (record.pk,) = row
    _saved(record)
    remember_written(game, previous=expected_version, encoded=encoded)
    return True


# --- the stream's reads (games/stream.py) -------------------------------------------------------
@dataclass(frozen=True)
class StreamRow:
    """One public event row with its ``position``: on PostgreSQL, the (64-bit) id of the
    transaction that wrote it; on SQLite, the row's id (one writer at a time, so ids follow
    the commits)."""

    id: int
    game_id: int
    version: int
    kind: str
    seat: int | None
    data: dict[str, Any]
    position: int


# A row's transaction id is 32 bits (``xmin``); the snapshot's are 64. A row written since the
# snapshot's wrap-around epoch began, or in the one before, is placed by its distance below the
# snapshot's ``xmax``; 0-2 are the frozen and special ids: older than anything.
_XID_SPAN = 2**32


@cache
def _stream_events_sql(vendor: str, kinds: tuple[str, ...], games: int) -> str:
    event, seat, game = GameEvent._meta, Seat._meta, Game._meta
    columns = ", ".join(
        f"e.{_q(event.get_field(name).column)}"
        for name in ("id", "game", "version", "kind", "seat", "data")
    )
    game_id, kind = _q(event.get_field("game").column), _q(event.get_field("kind").column)
    kind_list = ", ".join(f"'{each}'" for each in kinds)  # our own constants
    table = _q(event.db_table)
    # The user's seats taken since a time, at games open or running, in the same snapshot as
    # the rows: ``game:seat`` joined by commas (index ``seat_user_joined``).
    seat_game, user = _q(seat.get_field("game").column), _q(seat.get_field("user").column)
    one = f"CAST(st.{seat_game} AS TEXT) || ':' || CAST(st.{_q('index')} AS TEXT)"
    joined = f"string_agg({one}, ',')" if vendor == "postgresql" else f"group_concat({one}, ',')"
    seats = (
        f"(SELECT {joined} FROM {_q(seat.db_table)} st JOIN {_q(game.db_table)} gm "
        f"ON gm.{_q('id')} = st.{seat_game} WHERE st.{user} = %s AND st.{_q('joined_at')} >= %s "
        f"AND gm.{_q('status')} IN ('open', 'running'))"
    )
    if vendor != "postgresql":
        marks = ", ".join(["%s"] * games)
        # One writer at a time: every row committed is settled, the next gets a higher id. The
        # horizon is past the highest id ever given (AUTOINCREMENT keeps it in sqlite_sequence),
        # not only the highest still there: with the newest rows deleted (a user's games go
        # with the user) it would go back, below cursors already handed out.
        given = f"(SELECT seq FROM sqlite_sequence WHERE name = '{event.db_table}')"
        return (
            f"SELECT h.lo, h.seats, {columns}, e.{_q('id')} FROM "
            f"(SELECT MAX(COALESCE(MAX({_q('id')}), 0), COALESCE({given}, 0)) + 1 AS lo, "
            f"{seats} AS seats FROM {table}) h "
            f"LEFT JOIN {table} e ON e.{game_id} IN ({marks}) AND e.{kind} IN ({kind_list})"
        )
    position = (
        f"CASE WHEN e.xmin::text::bigint < 3 THEN 0 ELSE h.hi - "
        f"((h.hi %% {_XID_SPAN} - e.xmin::text::bigint + {_XID_SPAN}) %% {_XID_SPAN}) END"
    )
    # One statement, so one snapshot. The horizon: the snapshot's xmax, lowered to the oldest
    # transaction still running when it was taken (its xip), except those of other databases,
    # their prepared (two-phase) ones too (they cannot write these rows; a long one, or one
    # prepared and forgotten, must not hold this stream back). Every row below the horizon
    # that will ever commit is visible in this snapshot already.
    xmax = "pg_snapshot_xmax(s)::text::bigint"
    others = (
        "SELECT a.backend_xid::text::bigint FROM pg_stat_activity a "
        "WHERE a.datname IS DISTINCT FROM current_database() AND a.backend_xid IS NOT NULL "
        "UNION ALL SELECT p.transaction::text::bigint FROM pg_prepared_xacts p "
        "WHERE p.database IS DISTINCT FROM current_database()"
    )
    oldest = (
        f"SELECT MIN(x::text::bigint) FROM pg_snapshot_xip(s) x "
        f"WHERE x::text::bigint %% {_XID_SPAN} NOT IN ({others})"
    )
    return (
        f"SELECT h.lo, h.seats, {columns}, {position} FROM ("
        f"SELECT LEAST({xmax}, COALESCE(({oldest}), {xmax})) AS lo, {xmax} AS hi, "
        f"{seats} AS seats FROM pg_current_snapshot() s) h "
        f"LEFT JOIN {table} e ON e.{game_id} = ANY(%s) AND e.{kind} IN ({kind_list})"
    )


@dataclass(frozen=True)
class StreamRead:
    """One snapshot: its horizon, the rows asked for, and the user's latest seats at live games."""

    horizon: int
    rows: list[StreamRow]
    seats: list[tuple[int, int]]  # (game id, seat)


def stream_events(
    game_ids: Sequence[int], kinds: Sequence[str], *, user_id: object = None,
    joined_since: Any = None,
) -> StreamRead:
    """The horizon, every ``kinds`` event row of ``game_ids``, and ``user_id``'s seats taken
    since ``joined_since`` at games open or running, in one snapshot. A row whose position is
    below the horizon is settled: no transaction still running can commit a row below it."""
    vendor = connection.vendor
    sql = _stream_events_sql(vendor, tuple(kinds), len(game_ids))
    ids: list[Any] = [list(game_ids)] if vendor == "postgresql" else list(game_ids)
    if not game_ids and vendor != "postgresql":
        sql = sql.replace(" IN ()", " IN (NULL)")
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, joined_since, *ids])
        found = cursor.fetchall()
    seats = [tuple(map(int, pair.split(":"))) for pair in (found[0][1] or "").split(",") if pair]
    rows = [
        StreamRow(
            id=row[2], game_id=row[3], version=row[4], kind=row[5], seat=row[6],
            data=json.loads(row[7]) if isinstance(row[7], str) else row[7],
            position=int(row[8]),
        )
        for row in found
        if row[2] is not None
    ]
    return StreamRead(int(found[0][0]), rows, sorted((g, s) for g, s in seats))


@cache
def _stream_seats_sql(vendor: str) -> str:
    seat, game = Seat._meta, Game._meta
    game_id, user_id = _q(seat.get_field("game").column), _q(seat.get_field("user").column)
    status, finished = _q("status"), _q("finished_at")
    return (
        f"SELECT s.{game_id}, s.{_q('index')}, g.{status} FROM {_q(seat.db_table)} s "
        f"JOIN {_q(game.db_table)} g ON g.{_q('id')} = s.{game_id} "
        f"WHERE s.{user_id} = %s AND (g.{status} IN ('open', 'running') "
        f"OR g.{finished} >= %s) ORDER BY s.{game_id}"
    )


def stream_seats(user_id: object, *, ended_since: Any) -> list[tuple[int, int, str]]:
    """(game id, seat, status) of the user's seats at tables not over, or over since
    ``ended_since`` (a datetime)."""
    with connection.cursor() as cursor:
        cursor.execute(_stream_seats_sql(connection.vendor), [user_id, ended_since])
        return [(int(g), int(s), str(st)) for g, s, st in cursor.fetchall()]


def game_seat_users(game_id: int) -> tuple[str, dict[int, int]]:
    """The game's status and its seated users: user id -> seat."""
    seat = Seat._meta
    game_id_col, user_id = _q(seat.get_field("game").column), _q(seat.get_field("user").column)
    sql = (
        f"SELECT g.{_q('status')}, s.{user_id}, s.{_q('index')} FROM {_q(Game._meta.db_table)} g "
        f"LEFT JOIN {_q(seat.db_table)} s ON s.{game_id_col} = g.{_q('id')} "
        f"AND s.{user_id} IS NOT NULL WHERE g.{_q('id')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [game_id])
        found = cursor.fetchall()
    if not found:
        return "", {}
    return str(found[0][0]), {int(u): int(i) for _s, u, i in found if u is not None}
