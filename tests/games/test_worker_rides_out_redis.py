"""A Celery worker rides out a Redis restart: Redis stops under a running worker that holds a
countdown task (as every turn clock is), comes back on the same port, and the worker then runs
the next task. Celery 5.7.0 exited here ("Unrecoverable error: AttributeError ... 'hostname'"),
which is why pyproject.toml keeps it out. The Redis is this test's own, on a free port."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from kombu import Connection
from rest_framework.test import APIClient

from games.models import Game, MoveRecord, MoveSource
from games.tasks import turn_clock_check
from tests.live_server import database_url

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OwnRedis:
    """A redis-server of this test's own, which it may stop and start again on one port."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1",
             "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        for _ in range(100):  # bounded: 10 s
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    return
            time.sleep(0.1)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = OwnRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def worker_on(own_redis: OwnRedis) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A worker (started as tests/games/test_turn_clock_worker.py starts one) on the test's
    own Redis and its own queue."""
    queue = f"restart-test-{uuid.uuid4().hex}"
    env = {**os.environ, "DATABASE_URL": database_url(), "CELERY_QUEUE": queue,
           "CELERY_BROKER_URL": own_redis.url}
    env.pop("CELERY_RESULT_BACKEND", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool=solo",
         "--loglevel=WARNING", "-Q", queue],
        cwd=ROOT, env=env,
    )
    yield process, queue
    process.terminate()
    process.wait(20)


def _send(url: str, queue: str, *args: Any, **options: Any) -> None:
    with Connection(url) as broker:
        turn_clock_check.apply_async(args, connection=broker, queue=queue, **options)


def test_a_worker_holding_a_countdown_task_runs_tasks_again_after_redis_restarts(
    own_redis: OwnRedis,
    worker_on: tuple[subprocess.Popen[bytes], str],
    alice_api: APIClient,
    bob_api: APIClient,
) -> None:
    worker, queue = worker_on
    # A turn clock far in the future: the worker holds it unacknowledged until then.
    _send(own_redis.url, queue, 0, 0, countdown=600)
    unacked = redis.Redis(port=own_redis.port)
    for _ in range(300):  # bounded: 30 s for the worker to start and take it
        if unacked.hlen("unacked"):
            break
        time.sleep(0.1)
    assert unacked.hlen("unacked") == 1, "the worker never took the countdown task"

    own_redis.stop()
    time.sleep(3)  # the worker sees the lost connection at once and starts reconnecting
    assert worker.poll() is None, "the worker exited when Redis stopped"
    own_redis.start()

    # A table whose clock has run out, which only a task can move on (nobody reads it).
    created = alice_api.post(
        "/api/games/", {"seats": 2, "turn_seconds": 1, "options": {"single_hand": True}},
        format="json",
    ).json()
    assert bob_api.post(f"/api/games/{created['id']}/join/").status_code == 200
    started = alice_api.post(f"/api/games/{created['id']}/start/").json()
    time.sleep(1.5)  # past the deadline
    _send(own_redis.url, queue, started["id"], started["version"])
    for _ in range(600):  # bounded: 60 s (the worker retries the broker every few seconds)
        if MoveRecord.objects.filter(game_id=started["id"], source=MoveSource.CLOCK).exists():
            break
        time.sleep(0.1)
    assert worker.poll() is None, "the worker exited after Redis came back"
    assert MoveRecord.objects.filter(game_id=started["id"], source=MoveSource.CLOCK).exists()
    assert Game.objects.get(pk=started["id"]).version > started["version"]
