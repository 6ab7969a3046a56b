"""A service the web process leans on goes away: the broker (turn-clock checks) or the cache
(rate-limit counters). Play goes on: nothing stored is answered with an error, and the
survived failure is counted in ``/healthz/``. Real servers, really unreachable addresses."""

from __future__ import annotations

import time
from typing import Any

import pytest

from arena.accounts.services import token_create
from games.models import MoveRecord
from tests.live_server import (
    call,
    free_port,
    live_server,
    play_one_move,
    stalled_server,
    start_a_game,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_move_is_answered_as_played_when_the_broker_is_unreachable(
    alice: Any, bob: Any
) -> None:
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    closed = free_port()
    with live_server({"CELERY_BROKER_URL": f"redis://127.0.0.1:{closed}/0"}) as port:
        game = start_a_game(port, *keys)
        status, body = play_one_move(port, game["id"], keys)
        assert status == 201, body
        assert MoveRecord.objects.filter(game_id=game["id"]).count() == 1
        counters = call(port, "GET", "/healthz/")[1]["counters"]
    # The start's clock and the move's: both left to the sweep.
    assert counters["turn_clock_schedule_errors"] >= 2


def test_a_start_and_a_move_are_answered_within_seconds_when_the_broker_stalls(
    alice: Any, bob: Any
) -> None:
    """Redis stopped with SIGSTOP accepts connections and never answers: a send to it must
    give up (the transport's socket_timeout) instead of holding the request for good."""
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    with stalled_server() as stalled, live_server(
            {"CELERY_BROKER_URL": f"redis://127.0.0.1:{stalled}/0"}) as port:
        status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
            "seats": 2, "turn_seconds": 60, "options": {"single_hand": True}})
        assert status == 201, game
        assert call(port, "POST", f"/api/games/{game['id']}/join/", key=keys[1])[0] == 200
        began = time.monotonic()
        status, body, _ = call(port, "POST", f"/api/games/{game['id']}/start/", key=keys[0],
                               timeout=15)
        start_seconds = time.monotonic() - began
        assert status == 200, body
        began = time.monotonic()
        status, body = play_one_move(port, game["id"], keys)
        move_seconds = time.monotonic() - began
        assert status == 201, body
        counters = call(port, "GET", "/healthz/")[1]["counters"]
    assert start_seconds < 4 and move_seconds < 4, (start_seconds, move_seconds)
    assert MoveRecord.objects.filter(game_id=game["id"]).count() == 1
    # The start's clock (the send that gave up) and the move's (not tried: the back-off).
    assert counters["turn_clock_schedule_errors"] >= 2


def test_rate_limits_fail_open_when_the_cache_is_unreachable(alice: Any, bob: Any) -> None:
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    closed = free_port()
    with live_server({"CACHE_URL": f"redis://127.0.0.1:{closed}/1"}) as port:
        game = start_a_game(port, *keys)
        status, body = play_one_move(port, game["id"], keys)
        assert status == 201, body
        status, body, _ = call(port, "POST", "/api/tokens/", key=keys[0], body={})
        assert status == 201, body
        counters = call(port, "GET", "/healthz/")[1]["counters"]
    assert counters["throttle_cache_errors"] >= 2  # the move's and the token's


def test_a_stalled_cache_is_asked_once_then_left_alone_for_a_while(alice: Any, bob: Any) -> None:
    """Redis stopped with SIGSTOP: each rate-limited request waited out the cache client's
    socket timeout (a second) in turn (moves fell from about 85 a second to 4 in an outage
    review). After one failure the cache is left alone for 5 s: the moves that follow do not
    even connect to it."""
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    accepted: list[Any] = []
    with stalled_server(accepted) as stalled, live_server(
            {"CACHE_URL": f"redis://127.0.0.1:{stalled}/1"}, workers=1) as port:
        game = start_a_game(port, *keys)
        status, body = play_one_move(port, game["id"], keys)  # rate-limited: asks the cache
        assert status == 201, body
        tried = len(accepted)
        for _ in range(3):
            status, body = play_one_move(port, game["id"], keys)
            assert status == 201, body
        counters = call(port, "GET", "/healthz/")[1]["counters"]
    assert tried >= 1, (tried, counters)  # the first move asked it, and gave up
    assert len(accepted) == tried  # nothing after it (without the back-off: every move)
    assert counters["throttle_cache_errors"] >= 4  # each move's limit counted as not applied
    assert MoveRecord.objects.filter(game_id=game["id"]).count() == 4
