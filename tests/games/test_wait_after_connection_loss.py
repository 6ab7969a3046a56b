"""A waiting request whose thread's database connection died while it waited (PostgreSQL
restarted, or the backend terminated) goes on with a new one: its answer is the one it waits
for, never a 503 for a move that was committed. Needs PostgreSQL."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from django.db import connection

from arena.accounts.services import token_create
from tests.games.conftest import choose
from tests.live_server import call, live_server

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _terminate_the_servers_connections() -> int:
    """Every other backend of this test database: the server's (its LISTEN included)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _passing(legal: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A move that passes the turn at two seats: a number card, a plain wild, or keeping a
    drawn card (a skip, reverse or draw card would give the mover the next turn too)."""
    return next((m for m in legal if m["type"] == "keep" or (
        m["type"] == "play" and (m["card"][1:].isdigit() or m["card"] == "W"))), None)


def _awaited_with_a_passing_move(port: int, url: str, keys: list[str], rng: random.Random
                                 ) -> tuple[int, dict[str, Any]]:
    """The awaited seat and its view, once it has a move that passes the turn: until then
    the awaited seat plays (a colour to choose, a draw, a penalty to accept...)."""
    for _ in range(50):
        seat = call(port, "GET", f"{url}/view/", key=keys[0])[1]["view"]["awaiting"]
        view = call(port, "GET", f"{url}/view/", key=keys[seat])[1]
        assert view["status"] == "running", view
        if _passing(view["view"]["legal_moves"]) is not None:
            return seat, view
        move = {"version": view["version"], "move": choose(rng, view["view"]["legal_moves"])}
        assert call(port, "POST", f"{url}/moves/", key=keys[seat], body=move)[0] == 201
    raise AssertionError("no move passing the turn came")


@pytest.mark.parametrize("waiting", ["move", "view"])
def test_a_wait_whose_connection_died_gets_its_answer_not_a_503(
    django_user_model: Any, waiting: str
) -> None:
    """Before: resumed on a thread whose connection was dead and unchecked (the check ran
    once per request, after its last step), the wait answered 503 database_unavailable,
    also for a play-and-wait whose move had been committed."""
    keys = [token_create(user=django_user_model.objects.create_user(name))[1]
            for name in ("alice", "bob")]
    rng = random.Random(3)
    # One wait thread: the wait resumes on the thread, and the connection, its first step used.
    with live_server({"WAIT_THREADS": "1"}) as port:
        status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
            "seats": 2, "turn_seconds": 600, "options": {"single_hand": True}})
        assert status == 201, game
        url = f"/api/games/{game['id']}"
        assert call(port, "POST", f"{url}/join/", key=keys[1])[0] == 200
        assert call(port, "POST", f"{url}/start/", key=keys[0])[0] == 200
        mover, view = _awaited_with_a_passing_move(port, url, keys, rng)
        other = 1 - mover
        answers: list[tuple[int, Any]] = []

        def wait() -> None:
            if waiting == "move":  # play-and-wait: the move commits, then the wait
                path = f"{url}/moves/?wait=20&until=turn"
                body = {"version": view["version"],
                        "move": _passing(view["view"]["legal_moves"])}
                answers.append(call(port, "POST", path, key=keys[mover], body=body)[:2])
            else:  # the player not on turn long-polls for its turn
                path = f"{url}/view/?wait=20&until=turn"
                answers.append(call(port, "GET", path, key=keys[other])[:2])

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(1.0)  # the wait is suspended, its thread idle
        assert _terminate_the_servers_connections() >= 1
        time.sleep(2.0)  # the LISTEN comes back and has every wait read again
        assert waiter.is_alive(), answers  # still waiting: nobody moved yet
        # Whoever is now on turn plays until the turn passes (a draw keeps it): the wait ends
        # with the waiter's turn.
        on_turn = other if waiting == "move" else mover
        for _ in range(5):
            view = call(port, "GET", f"{url}/view/", key=keys[on_turn])[1]
            if view["view"]["awaiting"] != on_turn or view["status"] != "running":
                break
            move = {"version": view["version"],
                    "move": choose(rng, view["view"]["legal_moves"])}
            assert call(port, "POST", f"{url}/moves/", key=keys[on_turn], body=move)[0] == 201
        waiter.join(30)
    (status, body), = answers
    assert status in (200, 201), body
    assert body["view"]["legal_moves"] or body["status"] != "running"  # its turn, or the end
