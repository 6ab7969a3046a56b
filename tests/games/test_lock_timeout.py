"""A request stuck behind a row lock (a long transaction, someone's psql session) gives up after
``DB_LOCK_TIMEOUT_SECONDS``, rolled back, and says so: 503 ``database_busy`` with Retry-After,
nothing changed. Without it the request waited as long as the lock was held, and behind a
proxy (60 s) committed after the proxy had answered 504 for it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import InternalError, OperationalError, connection, transaction

from arena.accounts.services import token_create
from core.api_errors import database_error
from games.models import Game
from tests.live_server import call, database_url, free_port, live_server, start_a_game

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_move_held_up_by_a_row_lock_is_refused_503_and_changes_nothing(
    alice: Any, bob: Any
) -> None:
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    with live_server({"DB_LOCK_TIMEOUT_SECONDS": "1"}) as port:
        game = start_a_game(port, keys[0], keys[1])
        seat = call(port, "GET", f"/api/games/{game['id']}/view/", key=keys[0])[1]["view"][
            "awaiting"]
        view = call(port, "GET", f"/api/games/{game['id']}/view/", key=keys[seat])[1]
        move = {"version": view["version"], "move": view["view"]["legal_moves"][0]}
        params = connection.get_connection_params()
        with psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}
                             ) as holder:
            holder.execute("SELECT id FROM games_game WHERE id = %s FOR UPDATE", [game["id"]])
            status, body, headers = call(port, "POST", f"/api/games/{game['id']}/moves/",
                                         key=keys[seat], body=move)
            assert (status, body["code"]) == (503, "database_busy"), body
            assert headers["Retry-After"] == "1"
            assert Game.objects.get(pk=game["id"]).version == view["version"]
        status, body, _ = call(port, "POST", f"/api/games/{game['id']}/moves/", key=keys[seat],
                               body=move)
        assert status == 201, body  # the lock gone, the same move goes through


FROZEN_IN_A_TRANSACTION = """
import time
from django.db import transaction
from games.models import Game
with transaction.atomic():
    Game.objects.select_for_update().get(pk={game_id})
    print("locked", flush=True)
    time.sleep(60)  # as a process stopped or frozen here: no statement, the lock held
"""


def test_a_process_frozen_in_a_transaction_is_closed_and_lets_go_of_its_locks(
    alice: Any, bob: Any
) -> None:
    """A worker stopped mid-transaction (SIGSTOP, a paused VM) held its rows until it came
    back: the takeover of its match waited on them. PostgreSQL now closes such a session
    after ``DB_IDLE_IN_TRANSACTION_SECONDS``, and the rows can be locked again."""
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    with live_server() as port:
        game = start_a_game(port, keys[0], keys[1])
    env = {**os.environ, "DATABASE_URL": database_url(), "DB_IDLE_IN_TRANSACTION_SECONDS": "1",
           "DB_LOCK_TIMEOUT_SECONDS": "1"}
    frozen = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c",
         FROZEN_IN_A_TRANSACTION.format(game_id=game["id"])],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert frozen.stdout is not None and frozen.stdout.readline() == "locked\n"
        taken = False
        for _ in range(20):  # its session is closed within about a second
            try:
                with transaction.atomic():
                    connection.cursor().execute("SET LOCAL lock_timeout = '500ms'")
                    Game.objects.select_for_update().get(pk=game["id"])
                    taken = True
                    break
            except OperationalError:
                time.sleep(0.2)
        assert taken
    finally:
        frozen.kill()
        frozen.wait(10)


def test_with_the_database_down_a_request_is_told_to_come_back_not_that_it_failed() -> None:
    """PostgreSQL stopped or restarting: a 503 ``database_unavailable`` with Retry-After,
    which says the outcome is not known and how to send it again (before: a 500 that said
    only that it had been logged)."""
    nowhere = f"postgresql://arena:arena@127.0.0.1:{free_port()}/arena"
    with live_server({"DATABASE_URL": nowhere}) as port:
        status, body, headers = call(port, "POST", "/api/games/", key="0" * 40,
                                     body={"seats": 2})
        streamed = call(port, "GET", "/api/stream/", key="0" * 40)  # read outside DRF
    assert (status, body["code"]) == (503, "database_unavailable"), body
    assert headers["Retry-After"] == "2"
    assert "Idempotency-Key" in body["detail"]
    assert (streamed[0], streamed[1]["code"]) == (503, "database_unavailable"), streamed
    assert streamed[2]["Retry-After"] == "2"


def _wrapped(kind: type[Exception], cause: Exception) -> Exception:
    """A database error as Django raises it: its driver's error as the cause."""
    error = kind(str(cause))
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(("error", "answer"), [
    (_wrapped(OperationalError, psycopg.OperationalError("connection refused")),
     "database_unavailable"),
    (_wrapped(OperationalError, psycopg.errors.AdminShutdown("terminating connection")),
     "database_unavailable"),
    (_wrapped(InternalError, psycopg.errors.IdleInTransactionSessionTimeout("idle")),
     "database_unavailable"),
    (_wrapped(OperationalError, psycopg.errors.DeadlockDetected("deadlock detected")),
     "database_busy"),
    (_wrapped(OperationalError, psycopg.errors.SerializationFailure("could not serialize")),
     "database_busy"),
    (_wrapped(OperationalError, sqlite3.OperationalError("database is locked")),
     "database_busy"),
    (_wrapped(OperationalError, psycopg.errors.DiskFull("no space left")), None),
    (_wrapped(OperationalError, sqlite3.OperationalError("no such table: games_game")), None),
    (RuntimeError("a bug"), None),
])
def test_only_an_outage_or_a_rollback_is_a_503_anything_else_stays_a_logged_500(
    error: Exception, answer: str | None
) -> None:
    """Busy (rolled back: send it again) or out of reach (outcome unknown); a full disk or a
    missing table is no reason to come back in two seconds: a 500, logged."""
    mapped = database_error(error)
    assert (mapped.default_code if mapped is not None else None) == answer
