"""The turn clock with the real thing: a Celery worker process on Redis plays for a player
who never comes back, with nobody reading the game (CI runs this; it needs both services)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, MoveRecord, MoveSource
from tests.celery_workers import private_queue, start_worker

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A worker process on its own queue, so it sees only this test's tasks (the worker's own
    follow-up checks, the next turn's clock, go to that queue too)."""
    process = start_worker(private_queue(monkeypatch, "turn-clock-test"))
    yield process
    process.terminate()
    process.wait(20)


def test_a_worker_plays_the_default_move_when_the_clock_runs_out(
    alice_api: APIClient, bob_api: APIClient, worker: Any
) -> None:
    created = alice_api.post(
        "/api/games/", {"seats": 2, "turn_seconds": 1, "options": {"single_hand": True}},
        format="json",
    ).json()
    assert bob_api.post(f"/api/games/{created['id']}/join/").status_code == 200
    started = alice_api.post(f"/api/games/{created['id']}/start/").json()
    # Nobody plays and nobody reads the game: only the worker can move it on.
    for _ in range(300):  # bounded: at most 30 s
        if MoveRecord.objects.filter(game_id=started["id"], source=MoveSource.CLOCK).exists():
            break
        time.sleep(0.1)
    clock_moves = MoveRecord.objects.filter(game_id=started["id"], source=MoveSource.CLOCK)
    assert clock_moves.exists(), "the worker never played for the absent player"
    game = Game.objects.get(pk=started["id"])
    assert game.version > started["version"]
    assert game.seats.get(index=clock_moves.first().seat).strikes >= 1


def test_the_worker_alone_drives_an_abandoned_table_to_its_end(
    alice_api: APIClient, bob_api: APIClient, worker: Any
) -> None:
    """Each timeout arms the next turn's clock from inside the worker: strikes alternate
    until one seat reaches max_strikes and forfeits, which ends a two-seat game."""
    created = alice_api.post(
        "/api/games/",
        {"seats": 2, "turn_seconds": 1, "max_strikes": 2, "options": {"single_hand": True}},
        format="json",
    ).json()
    assert bob_api.post(f"/api/games/{created['id']}/join/").status_code == 200
    alice_api.post(f"/api/games/{created['id']}/start/")
    game = Game.objects.get(pk=created["id"])
    for _ in range(300):  # bounded: at most 30 s (three timeouts take about 5 s)
        game.refresh_from_db()
        if game.is_over:
            break
        time.sleep(0.1)
    assert (game.status, game.end_reason) == ("finished", "forfeit")
    assert sorted(game.seats.values_list("strikes", flat=True)) == [1, 2]
