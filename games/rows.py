"""Hand-written SQL for the game rows every move and every long-poll wake-up touches.

Profiling a move (see bench/api.py) showed Django spending more time compiling its ORM queries
than the database spent running them. These few statements are therefore written out once,
from the models' own table and column names, and the rows become ordinary model instances
with the same converters the ORM applies. Everything else (lists, the admin, creating and
joining tables, the clock's rare paths) stays on the ORM.

The SQL is portable: PostgreSQL gets ``FOR UPDATE``; SQLite needs none, since its
transactions are IMMEDIATE (see settings) and so already serialise writers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import connection, models, transaction

from games.models import Game, MoveRecord, Seat

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
    converted = []
    for value, (converters, column) in zip(
        values, _converters(model, connection.vendor), strict=True
    ):
        for convert in converters:
            value = convert(value, column, connection)
        converted.append(value)
    return model.from_db(connection.alias, None, converted)


# --- reads ------------------------------------------------------------------------------------
@cache
def _game_sql(vendor: str, lock: bool) -> str:
    table = _q(Game._meta.db_table)
    sql = f"SELECT {_select_list(Game, 'g')} FROM {table} g WHERE g.{_q('id')} = %s"
    return sql + " FOR UPDATE" if lock and vendor == "postgresql" else sql


def game_locked(game_id: int) -> Game:
    """The game row, locked until the transaction ends (the caller is in one)."""
    with connection.cursor() as cursor:
        cursor.execute(_game_sql(connection.vendor, True), [game_id])
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
    with connection.cursor() as cursor:
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


def seat_with_game(game_id: int, user_id: object) -> Seat | None:
    """The user's seat at the game with the game attached (one query), or None. The game's
    ``forfeited_seats`` says how many of its seats are forfeited."""
    with connection.cursor() as cursor:
        cursor.execute(_seat_with_game_sql(connection.vendor), [game_id, user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(Seat._meta.concrete_fields)
    seat = _instance(Seat, row[:width])
    game = _instance(Game, row[width:-1])
    game.forfeited_seats = int(row[-1])
    Seat.game.field.set_cached_value(seat, game)
    return seat


# --- writes -----------------------------------------------------------------------------------
@cache
def _game_update_sql(vendor: str) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    fields = tuple(f for f in Game._meta.concrete_fields if not f.primary_key)
    assignments = ", ".join(f"{_q(f.column)} = %s" for f in fields)
    return f"UPDATE {_q(Game._meta.db_table)} SET {assignments} WHERE {_q('id')} = %s", fields


def game_save(game: Game) -> None:
    """Write every column of an existing game row (what ``game.save()`` does, uncompiled)."""
    sql, fields = _game_update_sql(connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(game, False), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, game.pk])


@cache
def _move_insert_sql(vendor: str) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    fields = tuple(f for f in MoveRecord._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(_q(f.column) for f in fields)
    values = ", ".join("%s" for _ in fields)
    sql = f"INSERT INTO {_q(MoveRecord._meta.db_table)} ({columns}) VALUES ({values})"
    return sql + f" RETURNING {_q('id')}", fields


def move_insert(record: MoveRecord) -> MoveRecord:
    """Insert a new move record (what ``record.save()`` does, uncompiled); sets its id."""
    sql, fields = _move_insert_sql(connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(record, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        (record.pk,) = cursor.fetchone()
    record._state.adding = False
    record._state.db = connection.alias
    return record


@cache
def _move_commit_sql(vendor: str) -> str:
    """PostgreSQL: the compare-and-set update of the game and the move's insert in one
    statement (no transaction round trips): no row updated, nothing inserted."""
    update, _ = _game_update_sql(vendor)
    _, move_fields = _move_insert_sql(vendor)
    columns = ", ".join(_q(f.column) for f in move_fields)
    values = ", ".join("%s" for _ in move_fields)
    return (
        f"WITH cas AS ({update} AND {_q('version')} = %s RETURNING {_q('id')}) "
        f"INSERT INTO {_q(MoveRecord._meta.db_table)} ({columns}) SELECT {values} FROM cas "
        f"RETURNING {_q('id')}"
    )


def move_commit(game: Game, record: MoveRecord, *, expected_version: int) -> bool:
    """Write ``game`` and insert ``record`` if the stored game still has ``expected_version``
    (compare-and-set); False, with nothing written, if it moved on. Atomic on its own."""
    _, game_fields = _game_update_sql(connection.vendor)
    _, move_fields = _move_insert_sql(connection.vendor)
    game_params = [f.get_db_prep_save(f.pre_save(game, False), connection) for f in game_fields]
    move_params = [f.get_db_prep_save(f.pre_save(record, True), connection) for f in move_fields]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                _move_commit_sql(connection.vendor),
                [*game_params, game.pk, expected_version, *move_params],
            )
            row = cursor.fetchone()
        if row is None:
            return False
        (record.pk,) = row
    else:
        update, _ = _game_update_sql(connection.vendor)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"{update} AND {_q('version')} = %s", [*game_params, game.pk, expected_version]
            )
            if cursor.rowcount != 1:
                return False
            insert, _ = _move_insert_sql(connection.vendor)
            cursor.execute(insert, move_params)
            (record.pk,) = cursor.fetchone()
    record._state.adding = False
    record._state.db = connection.alias
    return True
