"""A finished game's replay never changes: it is built once and then served from the cache,
rebuilt only if the cache is gone, and each user may fetch so many a minute."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from core import metrics
from tests.games.conftest import play_to_the_end
from tests.live_server import free_port

pytestmark = pytest.mark.django_db


def _finished(running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient) -> int:
    play_to_the_end([alice_api, bob_api], running_game["id"], seed=5)
    return int(running_game["id"])


def test_a_finished_games_replay_is_built_once_then_served_from_the_cache(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = _finished(running_game, alice_api, bob_api)
    with CaptureQueriesContext(connection) as first:
        built = bob_api.get(f"/api/games/{gid}/replay/")
    with CaptureQueriesContext(connection) as second:
        cached = alice_api.get(f"/api/games/{gid}/replay/")
    assert built.status_code == cached.status_code == 200
    assert cached.json() == built.json()
    assert any("games_moverecord" in q["sql"] for q in first.captured_queries)
    assert not any("games_moverecord" in q["sql"] for q in second.captured_queries)


def test_the_replay_is_rebuilt_when_the_cache_is_unreachable(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient, settings: Any
) -> None:
    gid = _finished(running_game, alice_api, bob_api)
    expected = alice_api.get(f"/api/games/{gid}/replay/").json()
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{free_port()}/1",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }}
    before = metrics.snapshot()
    response = alice_api.get(f"/api/games/{gid}/replay/")
    assert response.status_code == 200
    assert response.json() == expected
    after = metrics.snapshot()
    assert after["replay_cache_errors"] > before["replay_cache_errors"]
    assert after["throttle_cache_errors"] > before["throttle_cache_errors"]  # it failed open


def test_each_user_may_fetch_so_many_replays_a_minute(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gid = _finished(running_game, alice_api, bob_api)
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"replay": "2/minute"})
    for _ in range(2):
        assert alice_api.get(f"/api/games/{gid}/replay/").status_code == 200
    refused = alice_api.get(f"/api/games/{gid}/replay/")
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled" and int(refused["Retry-After"]) > 0
    assert bob_api.get(f"/api/games/{gid}/replay/").status_code == 200  # per user
