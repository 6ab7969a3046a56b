"""GET /api/stream/ over a real ASGI server: one stream per player carrying every game they
sit in (start, turns with the seat's view, strikes, the end), as NDJSON or Server-Sent Events,
resumable from the last event id with nothing missed and nothing twice."""

from __future__ import annotations

from typing import Any

import pytest

from arena.accounts.services import token_create
from tests.games.stream_helpers import asgi_server, open_stream
from tests.live_server import call, start_a_game

pytestmark = pytest.mark.django_db(transaction=True)


def key_of(user: Any) -> str:
    return token_create(user=user)[1]


@pytest.fixture
def server() -> Any:
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port:
        yield port


def test_a_stream_tells_bob_his_game_started_his_turns_and_the_end(server, alice, bob):
    alice_key, bob_key = key_of(alice), key_of(bob)
    with open_stream(server, bob_key) as stream:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("application/x-ndjson")
        game = start_a_game(server, alice_key, bob_key)
        started = stream.next()
        assert started["type"] == "started" and started["game"] == game["id"]
        assert started["players"] == ["alice", "bob"]
        keys = [alice_key, bob_key]
        while True:
            awaited = call(server, "GET", f"/api/games/{game['id']}/view/", key=alice_key)[1]
            if awaited["status"] != "running":
                break
            seat = awaited["view"]["awaiting"]
            if seat == 1:
                turn = stream.until(lambda e: e["type"] in ("turn", "ended"))
                assert turn["type"] == "turn"
                rest = call(server, "GET", f"/api/games/{game['id']}/view/", key=bob_key)[1]
                assert {k: v for k, v in turn.items() if k not in ("id", "type")} == rest
            view = call(server, "GET", f"/api/games/{game['id']}/view/", key=keys[seat])[1]
            status, _body, _ = call(
                server, "POST", f"/api/games/{game['id']}/moves/", key=keys[seat],
                body={"version": view["version"], "move": view["view"]["legal_moves"][0]},
            )
            assert status == 201
        ended = stream.until(lambda e: e["type"] == "ended")
        assert ended["game"] == game["id"] and ended["status"] == "finished"
        assert ended["winner"] in (0, 1)
