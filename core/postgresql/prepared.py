"""A cursor whose statements PostgreSQL prepares once per connection (``DB_PREPARED_STATEMENTS``),
for the few statements every request or every move runs (``games.rows``, the token lookup in
``core.authentication``).

Django's own cursors bind parameters on the client side, so PostgreSQL parses and plans each
statement again every time. Planning the token lookup (a join of the token and user tables,
each with several indexes) took about 0.28 ms of the server's CPU per request, eight times
its execution (``pg_stat_statements`` with ``track_planning``, bench/api.py's load).
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorWrapper


class PreparedCursor(psycopg.Cursor[Any]):
    """Server-side binding, every statement prepared (psycopg keeps the connection's prepared
    statements; Django turns psycopg's automatic preparing off for the rest)."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                binary: bool | None = None) -> Any:
        try:
            return super().execute(query, params, prepare=True, binary=binary)
        except psycopg.errors.FeatureNotSupported:
            # "cached plan must not change result type": a migration changed a column these
            # statements return. Outside a transaction, forget this connection's prepared
            # statements (psycopg clears its cache when it sees DEALLOCATE ALL) and run it
            # again; inside one, the rollback that follows forgets them.
            if self.connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise
            super().execute("DEALLOCATE ALL", prepare=False)
            return super().execute(query, params, prepare=True, binary=binary)


def prepared_cursor() -> CursorWrapper:
    """Django's own cursor (its health check, error wrapping and query logging) around a
    preparing psycopg cursor on PostgreSQL; Django's plain cursor elsewhere or with the
    setting off."""
    if connection.vendor != "postgresql" or not settings.DB_PREPARED_STATEMENTS:
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        return connection._prepare_cursor(PreparedCursor(connection.connection))
