"""Percentiles of each group's newest rows, on PostgreSQL, in one statement.

The leaderboard shows each bot's turn latency p50/p99 over its newest calls. One query per bot
cost 207 queries for a page of 200 bots; one window-function query of all their newest calls
(the ORM's way, which ``bots.selectors`` keeps for SQLite) moved 100,000 rows to Python, slower
still (320 ms). Here each group's newest rows are read by the ``(group, -id)`` index in a
``LATERAL`` subquery and ``percentile_disc`` picks the values in the database: 60 ms for 200
bots. The ORM has no ``LATERAL``, hence the SQL. It is generic (a model and its column names
come from the caller), so the games app still knows nothing of the bots app's tables.
Part of ``games.rows``, which imports ``newest_percentiles``: call it from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, models


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def newest_percentiles(
    model: type[models.Model], *, group: str, groups: Sequence[int], value: str,
    where: tuple[str, Any], window: int, fractions: Sequence[float],
) -> dict[int, tuple[int, list[Any]]]:
    """For each of ``groups`` (values of the ``group`` column): how many rows among its newest
    ``window`` (by id) with ``where`` (a column and the value it equals) have a ``value`` (not
    null), and the ``fractions``' nearest-rank percentiles of those values
    (``percentile_disc``, which leaves nulls out: the ceil(n * fraction)-th smallest), None
    without any. PostgreSQL only."""
    fields = {f.name: f.column for f in model._meta.concrete_fields}
    picks = ", ".join("percentile_disc(%s) WITHIN GROUP (ORDER BY newest.v)" for _ in fractions)
    sql = (
        f"SELECT wanted.g, counted.* FROM unnest(%s::bigint[]) AS wanted(g) "
        f"CROSS JOIN LATERAL (SELECT count(newest.v), {picks} FROM ("
        f"SELECT {_q(fields[value])} AS v FROM {_q(model._meta.db_table)} "
        f"WHERE {_q(fields[group])} = wanted.g AND {_q(fields[where[0]])} = %s "
        f"ORDER BY {_q(model._meta.pk.column)} DESC LIMIT %s) AS newest) AS counted"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [list(groups), *fractions, where[1], window])
        return {row[0]: (row[1], list(row[2:])) for row in cursor.fetchall()}
