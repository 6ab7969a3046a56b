"""PostgreSQL as Django's own backend has it, with a cheaper connection health check.

With ``CONN_HEALTH_CHECKS`` Django runs ``SELECT 1`` before the first query of every request
that reuses a connection. In a profile of ``bench/waiting.py`` that round trip was about 30% of
an API request's time: the token lookup, each request's first query, waited on it behind the
other requests' statements. In one run, turning the checks off gave 17 to 24% more moves in the
same time.

A connection whose server went away (a restart, a kill, ``pg_terminate_backend``, an idle
timeout) has been sent an error or a close: its socket is readable though nothing was asked.
One with nothing to read is as the last request left it. So the check first polls the socket
without waiting, as urllib3 checks a pooled connection before reusing it
(``is_connection_dropped``), and only a readable socket, or one it cannot poll, pays for
Django's full check. What is not caught is what ``SELECT 1`` would wait on anyway: a peer that
vanished without a word (its first query then fails, and the request with it).
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql import base, operations

from core.postgresql.prepared import PreparedCursor


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str | None:
        """The SQL that query logging records (``connection.queries``, tests' captured
        queries) for the prepared statements too, with their parameters in it, as for Django's
        own server-side binding: Django's reads the client-side cursor's query, which a
        preparing cursor has none of (it logged ``None``)."""
        if isinstance(cursor, PreparedCursor):
            try:
                return str(self.compose_sql(sql, params))
            except psycopg.errors.DataError:
                return None
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def close_if_health_check_failed(self) -> None:
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and not self.pool
            and _quiet(self.connection)
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()


def _quiet(connection: Any) -> bool:
    """True if the server has sent nothing since its last answer (poll, not select: a busy
    process's descriptors run past select's 1024)."""
    try:
        if connection.closed or connection.broken:
            return False
        poller = select.poll()
        poller.register(connection.pgconn.socket, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except Exception:  # the connection cannot say: let the full check decide
        return False
