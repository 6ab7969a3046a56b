"""Hidden information over the stream: while a game runs, no event shows another hand, the
deck or the seed; each turn's view is exactly what the REST view shows that seat at that
version. The REST view's leak check (test_hidden_information) runs over every event, of
games with assorted options and 2-4 seats played through the streams alone."""

from __future__ import annotations

import json
import random
from contextlib import ExitStack
from types import SimpleNamespace
from typing import Any

import pytest

from arena.accounts.services import token_create
from games.models import Game
from tests.games.conftest import choose
from tests.games.stream_helpers import asgi_server, open_stream
from tests.games.test_hidden_information import OPTION_SETS, assert_no_leak
from tests.live_server import call

pytestmark = pytest.mark.django_db(transaction=True)


def check(event: dict[str, Any], seat: int) -> None:
    """``assert_no_leak`` on the event as the response body it would be, for its seat."""
    response = SimpleNamespace(content=json.dumps(event).encode(), request=event["type"])
    assert_no_leak(response, event["game"], seat)


def play_over_streams(port: int, keys: list[str], streams: list[Any], game_id: int,
                      rng: random.Random) -> int:
    """Every seat plays its turns as its stream brings them; every event is checked while
    the game stands at the event's version (only turns move it, after the check)."""
    checked = 0
    for _ in range(5000):  # bounded
        game = Game.objects.get(pk=game_id)
        if game.is_over:
            return checked
        seat = game.awaiting
        turn = streams[seat].until(
            lambda e, v=game.version: e["type"] == "ended" or (
                e["type"] == "turn" and e["game"] == game_id and e["version"] == v))
        for other, stream in enumerate(streams):
            for event in stream.seen[stream.checked:]:
                if event["game"] == game_id:
                    check(event, other)
                    checked += 1
            stream.checked = len(stream.seen)
        if turn["type"] == "ended":
            return checked
        rest = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[seat])[1]
        assert {k: v for k, v in turn.items() if k not in ("id", "type")} == rest
        move = choose(rng, turn["view"]["legal_moves"])
        status, body, _ = call(port, "POST", f"/api/games/{game_id}/moves/", key=keys[seat],
                               body={"version": turn["version"], "move": move})
        assert status == 201, body
    raise AssertionError("the game did not end")


def test_no_streamed_event_shows_another_hand_the_deck_or_the_seed(django_user_model):
    rng = random.Random(5)
    users = [django_user_model.objects.create_user(f"streamer-{i}") for i in range(4)]
    keys = [token_create(user=u)[1] for u in users]
    checked = 0
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port, ExitStack() as stack:
        opened = [stack.enter_context(open_stream(port, key)) for key in keys]
        for stream in opened:
            stream.checked = 0
        for number, options in enumerate(OPTION_SETS):
            seats = 2 + number % 3
            status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
                "seats": seats, "turn_seconds": 600,
                "options": {**options, "single_hand": True}})
            assert status == 201, game
            url = f"/api/games/{game['id']}"
            for key in keys[1:seats]:
                assert call(port, "POST", f"{url}/join/", key=key)[0] == 200
            assert call(port, "POST", f"{url}/start/", key=keys[0])[0] == 200
            checked += play_over_streams(port, keys[:seats], opened[:seats], game["id"], rng)
    assert checked > 40  # every game played through, every event checked


def open_table(port: int, creator: str, *, seats: int, sitting: str, at: int) -> int:
    """A single-hand table ``creator`` opened, with ``sitting`` in seat ``at``; its id."""
    status, game, _ = call(port, "POST", "/api/games/", key=creator, body={
        "seats": seats, "turn_seconds": 600, "options": {"single_hand": True}})
    assert status == 201, game
    assert call(port, "POST", f"/api/games/{game['id']}/join/", key=sitting,
                body={"seat": at})[0] == 200
    return int(game["id"])


def test_a_stream_follows_the_seat_its_user_moved_to_at_an_open_table(django_user_model):
    """alice's stream learnt her seat at an open table (2); she moved to seat 1 and charlie
    took seat 2. Her stream kept the old seat: it sent her charlie's hand at every one of his
    turns, and none of hers (a security review). Every event is checked for the seat she
    plays, and she plays through the stream."""
    rng = random.Random(8)
    bob, alice, charlie = (django_user_model.objects.create_user(n)
                           for n in ("bob-s", "alice-s", "charlie-s"))
    keys = [token_create(user=u)[1] for u in (bob, alice, charlie)]  # in seat order, at last
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port, ExitStack() as stack:
        game_id = open_table(port, keys[0], seats=3, sitting=keys[1], at=2)
        url = f"/api/games/{game_id}"
        opened = [stack.enter_context(open_stream(port, key)) for key in keys]
        for stream in opened:
            stream.checked = 0
        opened[1].next(heartbeats=True)  # her stream follows the game, at seat 2
        assert call(port, "POST", f"{url}/leave/", key=keys[1])[0] == 200
        assert call(port, "POST", f"{url}/join/", key=keys[1], body={"seat": 1})[0] == 200
        assert call(port, "POST", f"{url}/join/", key=keys[2], body={"seat": 2})[0] == 200
        assert call(port, "POST", f"{url}/start/", key=keys[0])[0] == 200
        assert play_over_streams(port, keys, opened, game_id, rng) > 10
    assert {e["seat"] for e in opened[1].seen if e["type"] == "turn"} == {1}


def test_a_stream_says_nothing_of_a_table_its_user_left_before_the_start(django_user_model):
    """alice's stream followed the open table she sat at; she left, dave took her seat and
    the game was played: she is sent no ``started``, no turn, nothing of it (a review)."""
    rng = random.Random(9)
    bob, alice, dave = (django_user_model.objects.create_user(n)
                        for n in ("bob-l", "alice-l", "dave-l"))
    keys = [token_create(user=u)[1] for u in (bob, dave, alice)]
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port, ExitStack() as stack:
        game_id = open_table(port, keys[0], seats=2, sitting=keys[2], at=1)
        url = f"/api/games/{game_id}"
        hers = stack.enter_context(open_stream(port, keys[2]))
        hers.next(heartbeats=True)  # her stream follows the game, at seat 1
        assert call(port, "POST", f"{url}/leave/", key=keys[2])[0] == 200
        assert call(port, "POST", f"{url}/join/", key=keys[1], body={"seat": 1})[0] == 200
        players = [stack.enter_context(open_stream(port, key)) for key in keys[:2]]
        for stream in players:
            stream.checked = 0
        assert call(port, "POST", f"{url}/start/", key=keys[0])[0] == 200
        assert play_over_streams(port, keys[:2], players, game_id, rng) > 0
        for _ in range(3):  # three heartbeats: what was coming has come
            while hers.next(heartbeats=True)["type"] != "heartbeat":
                pass
    assert [e for e in hers.seen if e.get("game") == game_id] == []
