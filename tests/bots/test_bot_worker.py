"""Bot seats with the real thing: a Celery worker process on Redis plays every bot decision
(``bots.tasks.bot_turn``), each move scheduling the next bot's turn, with nobody else acting
on the game after its start (CI runs this; it needs PostgreSQL and Redis)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bots import dispatch
from bots import services as bot_services
from bots.models import BotCall
from bots.serve import serve_in_thread
from games.models import Game, GameStatus, MoveRecord, MoveSource
from tests.bots.helpers import register
from tests.celery_workers import private_queue, start_worker
from tests.games.conftest import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process on its own queue, so it sees only this test's tasks."""
    queue = private_queue(monkeypatch, "bots-test")
    settings.BOTS_RUNNER = "celery"
    dispatch.forget()
    process = start_worker(queue, BOTS_RUNNER="celery", BOTS_ALLOW_PRIVATE="true")
    yield process
    process.terminate()
    process.wait(20)


def test_a_worker_plays_a_whole_game_between_two_http_bots(alice: Any, worker: Any) -> None:
    registered = [register(alice, f"w{i}", "http://127.0.0.1:9/") for i in range(2)]
    stops = []
    try:
        for bot, secret in registered:
            url, stop = serve_in_thread("greedy", secret, seed=bot.pk)
            stops.append(stop)
            bot_services.bot_update(bot=bot, data={"url": url})
        api = client_for(alice)
        table = {"seats": 2, "join": False, "options": {"single_hand": True}}
        gid = api.post("/api/games/", table, format="json").json()["id"]
        for bot, _ in registered:
            assert api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json"
                            ).status_code == 200
        assert api.post(f"/api/games/{gid}/start/").status_code == 200
        for _ in range(600):  # bounded: at most 60 s
            if Game.objects.get(pk=gid).status != GameStatus.RUNNING:
                break
            time.sleep(0.1)
    finally:
        for stop in stops:
            stop()
    game = Game.objects.get(pk=gid)
    assert game.status == GameStatus.FINISHED and game.end_reason == "match"
    moves = MoveRecord.objects.filter(game=game)
    assert moves.exists() and not moves.exclude(source=MoveSource.PLAYER).exists()
    assert BotCall.objects.filter(game=game, kind="turn", outcome="move").count() == moves.count()
