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

from django.db import connection, models

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
    return (
        f"SELECT {_select_list(Seat, 's')}, {_select_list(Game, 'g')} "
        f"FROM {_q(seat.db_table)} s JOIN {_q(game.db_table)} g "
        f"ON g.{_q('id')} = s.{_q(seat.get_field('game').column)} "
        f"WHERE s.{_q(seat.get_field('game').column)} = %s "
        f"AND s.{_q(seat.get_field('user').column)} = %s"
    )


def seat_with_game(game_id: int, user_id: object) -> Seat | None:
    """The user's seat at the game with the game attached (one query), or None."""
    with connection.cursor() as cursor:
        cursor.execute(_seat_with_game_sql(connection.vendor), [game_id, user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(Seat._meta.concrete_fields)
    seat = _instance(Seat, row[:width])
    Seat.game.field.set_cached_value(seat, _instance(Game, row[width:]))
    return seat


@cache
def _seat_index_sql(vendor: str) -> str:
    seat = Seat._meta
    return (
        f"SELECT s.{_q('index')} FROM {_q(seat.db_table)} s "
        f"WHERE s.{_q(seat.get_field('game').column)} = %s "
        f"AND s.{_q(seat.get_field('user').column)} = %s"
    )


def seat_index(game_id: int, user_id: object) -> int | None:
    """The user's seat number at the game, or None."""
    with connection.cursor() as cursor:
        cursor.execute(_seat_index_sql(connection.vendor), [game_id, user_id])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


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
