"""Whole games through a real server: gunicorn with two worker processes on PostgreSQL, so a
player's move and the opponent's long poll are often served by different processes (woken by
PostgreSQL NOTIFY, each process remembering the rows it saw). CI runs this."""

from __future__ import annotations

import http.client
import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from arena.accounts.services import token_create
from games import uno
from games.models import Game, MoveRecord
from tests.games.conftest import choose
from tests.live_server import live_server

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def server() -> Iterator[int]:
    """gunicorn, 2 processes x 4 threads, on this test's (committed) database (no broker:
    clocks are an hour, no tasks to run)."""
    with live_server(workers=2, threads=4) as port:
        yield port


class Player:
    """One bot on its own keep-alive connection, as docs/api.md tells a bot to play."""

    def __init__(self, port: int, key: str, seed: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
        self.rng = random.Random(seed)
        self.bodies: list[str] = []

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        self.connection.request(method, path, data, self.headers)
        response = self.connection.getresponse()
        raw = response.read().decode()
        self.bodies.append(raw)
        assert response.status < 500, raw
        return response.status, json.loads(raw) if raw else None

    def play(self, game_id: int, seat: int) -> dict[str, Any]:
        """Play-and-wait until the game is over; returns the last view seen."""
        path = f"/api/games/{game_id}"
        status, body = self.call("GET", f"{path}/view/?wait=20&until=turn")
        for _ in range(2000):
            assert status in (200, 201, 409), body
            if status == 409:  # stale (e.g. a jump-in or catch elsewhere): look again
                status, body = self.call("GET", f"{path}/view/")
                continue
            assert body["seat"] == seat
            if body["status"] != "running":
                return body
            view = body["view"]
            if view["awaiting"] != seat:
                status, body = self.call("GET", f"{path}/view/?wait=20&until=turn")
                continue
            move = choose(self.rng, view["legal_moves"])
            status, body = self.call("POST", f"{path}/moves/?wait=20&until=turn",
                                     {"version": body["version"], "move": move})
        raise AssertionError("the game did not end")


def _play(player: Player, game_id: int, seat: int, finals: list[dict[str, Any]]) -> None:
    try:
        finals[seat] = player.play(game_id, seat)
    finally:
        connection.close()  # the thread's own database connection


def test_two_bots_play_whole_games_across_two_server_processes(
    server: int, alice: Any, bob: Any
) -> None:
    players = [Player(server, token_create(user=user)[1], seed) for seed, user in
               enumerate((alice, bob))]
    for _ in range(3):
        status, game = players[0].call("POST", "/api/games/", {
            "seats": 2, "options": {"single_hand": True}, "turn_seconds": 3600})
        assert status == 201
        assert players[1].call("POST", f"/api/games/{game['id']}/join/")[0] == 200
        assert players[0].call("POST", f"/api/games/{game['id']}/start/")[0] == 200

        finals: list[dict[str, Any]] = [{}, {}]
        threads = [threading.Thread(target=_play, args=(players[seat], game["id"], seat, finals))
                   for seat in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)

        stored = Game.objects.get(pk=game["id"])
        assert stored.status == "finished" and finals[0]["version"] == finals[1]["version"]
        assert finals[0]["view"]["winner"] == finals[1]["view"]["winner"] == stored.winner
        # The move log replays to the stored final state, and its versions are dense.
        records = list(MoveRecord.objects.filter(game=stored).order_by("number"))
        replayed = uno.replay(uno.Options.from_json(stored.options), stored.seed,
                              [(r.seat, uno.Move.from_json(r.move)) for r in records])
        assert replayed.to_json()["hands"] == stored.state["hands"]
        events = players[0].call("GET", f"/api/games/{game['id']}/events/")[1]
        assert [e["version"] for e in events["events"]] == list(range(1, stored.version + 1))
    # No answer to a player ever showed the other player's cards of a running game: each
    # body's hand is the player's own (the view says which seat it is).
    for seat, player in enumerate(players):
        for raw in player.bodies:
            body = json.loads(raw) if raw else {}
            if isinstance(body, dict) and body.get("status") == "running" and "view" in body:
                assert body["seat"] == seat and "hands" not in body["view"]
