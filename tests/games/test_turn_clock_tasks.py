"""Which turns get a task of their own on the real broker: short ones do; a long one (a day
to move) gets none, so no countdown sits in a worker and in Redis for hours; the periodic
sweep settles it instead."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.conf import settings
from kombu import Connection
from rest_framework.test import APIClient

from arena.celery import app as celery_app
from games import services
from games.models import Game
from tests.games.conftest import create_game

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A queue of this test's own on the real broker, nobody consuming it."""
    name = f"turn-clock-tasks-{uuid.uuid4().hex}"
    # Both names: celery 5.6 lets the namespaced one (read from Django's settings) win.
    monkeypatch.setitem(celery_app.conf, "task_default_queue", name)
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_DEFAULT_QUEUE", name)
    yield name
    with Connection(settings.CELERY_BROKER_URL) as broker:
        broker.default_channel.queue_delete(name)


def _queued(name: str) -> int:
    with Connection(settings.CELERY_BROKER_URL) as broker:
        return int(broker.default_channel.client.llen(name))


def _start(alice_api: APIClient, bob_api: APIClient, turn_seconds: int) -> dict[str, Any]:
    game = create_game(alice_api, seats=2, turn_seconds=turn_seconds,
                       options={"single_hand": True})
    assert bob_api.post(f"/api/games/{game['id']}/join/").status_code == 200
    return alice_api.post(f"/api/games/{game['id']}/start/").json()


def test_a_short_turn_is_checked_by_a_task_at_its_deadline(
    alice_api: APIClient, bob_api: APIClient, queue: str
) -> None:
    _start(alice_api, bob_api, turn_seconds=30)
    assert _queued(queue) == 1


def test_a_day_long_turn_leaves_no_task_behind_and_the_sweep_settles_it(
    alice_api: APIClient, bob_api: APIClient, queue: str, fake_clock: Any
) -> None:
    game = _start(alice_api, bob_api, turn_seconds=86_400)
    assert game["turn_seconds"] > settings.TURN_CLOCK_TASK_MAX_SECONDS
    assert _queued(queue) == 0
    fake_clock.advance(86_401)
    assert services.turn_clock_sweep() == 1
    assert Game.objects.get(pk=game["id"]).version > game["version"]


def test_the_broker_keeps_an_unacknowledged_task_longer_than_any_countdown() -> None:
    options = celery_app.conf.broker_transport_options
    assert options["visibility_timeout"] == settings.BROKER_VISIBILITY_TIMEOUT
    assert options["visibility_timeout"] >= settings.TURN_CLOCK_TASK_MAX_SECONDS * 2
