"""A request stuck behind a row lock (a long transaction, someone's psql session) gives up after
``DB_LOCK_TIMEOUT_SECONDS``, rolled back, and says so: 503 ``database_busy`` with Retry-After,
nothing changed. Without it the request waited as long as the lock was held, and behind a
proxy (60 s) committed after the proxy had answered 504 for it."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import connection

from arena.accounts.services import token_create
from games.models import Game
from tests.live_server import call, live_server, start_a_game

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
