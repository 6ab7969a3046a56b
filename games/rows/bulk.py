"""Many new rows at once: what ``bulk_create`` does, without the ORM's compiling.

A whole game's moves and events, a driver's call log, a batch's games and seats and a
tournament's records are written here: as one multi-row ``INSERT``, or ``COPY`` on PostgreSQL.
Each value is prepared the way the ORM would (JSON encoded, times set), nothing more. Part of
``games.rows``, which imports these two functions: call them from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC
from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.utils import timezone

from games.recent import dumped


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


@cache
def _insert_many_sql(
    model: type[models.Model], vendor: str, rows_count: int
) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(_q(f.column) for f in fields)
    one = "(" + ", ".join("%s" for _ in fields) + ")"
    return (f"INSERT INTO {_q(model._meta.db_table)} ({columns}) VALUES "
            + ", ".join([one] * rows_count)), fields


# Values the database driver takes as they are; any other field's value is prepared.
_RAW_TYPES = frozenset({
    "AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField",
    "SmallIntegerField", "PositiveIntegerField", "PositiveSmallIntegerField",
    "PositiveBigIntegerField", "FloatField", "CharField", "TextField", "BooleanField",
    "ForeignKey", "OneToOneField",
})


def insert_many(model: type[models.Model], items: Sequence[models.Model | dict[str, Any]]
                ) -> None:
    """Insert new rows of ``model`` (what ``bulk_create`` does, ids not read back), a
    statement per batch: a whole game's moves and events, a driver's call log. ``items``:
    instances, or dicts by attname (a missing field gets its default). The ORM's
    ``bulk_create`` prepares every value through its compiler (80 us a call-log row here);
    these rows need only their JSON encoded and their times set (``auto_now``: now;
    ``auto_now_add``: now unless the row has its own, as a move made in memory has)."""
    if not items:
        return
    db = connections[DEFAULT_DB_ALIAS]  # the proxy looks itself up on every attribute
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    _write_rows(db, model, fields, items, timezone.now())


def insert_new(model: type[models.Model], instances: Sequence[models.Model]) -> None:
    """Insert new ``instances`` and give each its id, as ``bulk_create`` does: a batch's
    games and seats, which the caller goes on with. On PostgreSQL the ids are drawn from the
    table's sequence first, in one statement, and the rows are copied in with them.
    ``bulk_create`` sends a multi-row insert there as one array per column (Django 5.2's
    ``UNNEST``), and psycopg's client-side binding writes those arrays out in Python, escaping
    every quote of every game's JSON state with a regular expression: about a millisecond a
    game, the largest single item of a tournament's begin batch in a profile."""
    if not instances:
        return
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        model._default_manager.bulk_create(instances)
        return
    meta = model._meta
    assert meta.pk is not None
    with db.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) "
                       "FROM generate_series(1, %s)", [meta.db_table, meta.pk.column,
                                                        len(instances)])
        ids = sorted(row[0] for row in cursor.fetchall())  # ascending, as bulk_create's
    fields = list(meta.concrete_fields)
    now = timezone.now()
    stamped = [f for f in fields if getattr(f, "auto_now", False)
               or getattr(f, "auto_now_add", False)]
    for instance, new_id in zip(instances, ids, strict=True):
        setattr(instance, meta.pk.attname, new_id)
        for field in stamped:  # the times the rows get (``_getter``), as bulk_create sets them
            if getattr(field, "auto_now", False) or getattr(instance, field.attname) is None:
                setattr(instance, field.attname, now)
    _write_rows(db, model, fields, instances, now)
    for instance in instances:  # saved: a later save() updates the row
        instance._state.adding = False
        instance._state.db = db.alias


def _write_rows(db: Any, model: type[models.Model], fields: Sequence[models.Field[Any, Any]],
                items: Sequence[models.Model | dict[str, Any]], now: Any) -> None:
    """``items``' values of ``fields``, written as new rows (COPY on PostgreSQL)."""
    getters = [_getter(f, db, now) for f in fields]
    params: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            item = {f.attname: getattr(item, f.attname) for f in fields}
        params.extend([get(item) for get in getters])
    width = len(fields)
    if db.vendor == "postgresql":
        _copy_rows(db, model, fields, params, width)
        return
    batch = max(1, db.ops.bulk_batch_size(fields, items))
    with db.cursor() as cursor:
        for start in range(0, len(items), batch):
            count = min(batch, len(items) - start)
            sql, _ = _insert_many_sql(model, db.vendor, count)
            cursor.execute(sql, params[start * width:(start + count) * width])


def _getter(field: models.Field[Any, Any], db: Any, now: Any) -> Callable[[dict[str, Any]], Any]:
    """How ``insert_many`` takes one field's parameter from a row (a dict by attname)."""
    key = field.attname
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        keep = not getattr(field, "auto_now", False)  # auto_now_add: a time set stands
        postgres = db.vendor == "postgresql"

        adapt = (lambda value: value) if postgres else _sqlite_datetime

        def stamp(row: dict[str, Any]) -> Any:
            value = row.get(key) if keep else None
            return adapt(now if value is None else value)

        return stamp
    default = field.get_default() if field.has_default() or field.null else None
    if isinstance(field, models.JSONField):
        encoder = field.encoder

        def encoded(row: dict[str, Any]) -> Any:
            value = row.get(key, default)
            if value is None:
                return None
            return dumped(value, encoder)  # a game's moves are thousands of small values

        return encoded
    if field.get_internal_type() in _RAW_TYPES:
        return lambda row: row.get(key, default)
    return lambda row: field.get_db_prep_save(row.get(key, default), db)


def _sqlite_datetime(value: Any) -> str:
    """``adapt_datetimefield_value`` of SQLite's backend (a time in UTC, written naive, as
    ``str`` writes it) for the aware times of ``USE_TZ``, without its per-value checks."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return str(value)


_MISSING = object()


def _copy_rows(db: Any, model: type[models.Model], fields: Sequence[models.Field[Any, Any]],
               params: list[Any], width: int) -> None:
    """PostgreSQL: the rows through COPY. A multi-row INSERT of a game's call log has hundreds
    of placeholders, and psycopg parses such a statement afresh every time (it caches only
    statements of at most 50 parameters): 10 ms a game, against 2-3 ms for the same rows
    copied. JSON values are already text here; the column's type parses them."""
    columns = ", ".join(_q(f.column) for f in fields)
    # The wrapper: a violated constraint is Django's IntegrityError, as from any other insert.
    with db.wrap_database_errors, db.cursor() as cursor, cursor.cursor.copy(
            f"COPY {_q(model._meta.db_table)} ({columns}) FROM STDIN") as copy:
        for start in range(0, len(params), width):
            copy.write_row(params[start:start + width])
