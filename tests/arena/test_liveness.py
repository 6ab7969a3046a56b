"""The liveness file of the celery services (compose's healthchecks, arena/liveness.py): a
real ``celery worker`` touches it while it takes tasks, a real ``celery beat`` at every tick
(CI runs these; they need Redis)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings

from tests.celery_workers import ROOT, start_worker, stop_all

pytestmark = pytest.mark.redis


def wait_for(condition: object, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def touched_again(path: Path) -> bool:
    """The file appears, then is touched again later (its mtime moves on)."""
    if not wait_for(path.exists):
        return False
    first = path.stat().st_mtime
    return wait_for(lambda: path.stat().st_mtime > first)


@pytest.fixture
def stopped_after() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    stop_all(processes)


def test_a_worker_touches_its_liveness_file_while_it_takes_tasks(
    tmp_path: Path, stopped_after: list[subprocess.Popen[bytes]]
) -> None:
    alive = tmp_path / "alive"
    worker = start_worker(f"liveness-{uuid.uuid4().hex}", CELERY_ALIVE_FILE=str(alive),
                          CELERY_ALIVE_SECONDS="1")
    stopped_after.append(worker)
    assert touched_again(alive)
    worker.terminate()
    worker.wait(20)
    stopped = alive.stat().st_mtime
    time.sleep(1.5)
    assert alive.stat().st_mtime == stopped  # nobody touches it for a stopped worker


def test_beat_touches_its_liveness_file_at_every_tick(
    tmp_path: Path, stopped_after: list[subprocess.Popen[bytes]]
) -> None:
    alive = tmp_path / "alive"
    queue = f"liveness-{uuid.uuid4().hex}"  # its sweeps go to a queue nobody reads
    # Sweeps far apart: beat wakes every CELERY_ALIVE_SECONDS all the same.
    env = {**os.environ, "CELERY_QUEUE": queue, "CELERY_ALIVE_FILE": str(alive),
           "CELERY_ALIVE_SECONDS": "1", "TURN_CLOCK_SWEEP_SECONDS": "600",
           "TOURNAMENT_SWEEP_SECONDS": "600"}
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "beat", "--loglevel=WARNING",
         f"--schedule={tmp_path / 'schedule'}"],
        cwd=ROOT, env=env,
    )
    stopped_after.append(beat)
    try:
        assert touched_again(alive)
    finally:
        beat.terminate()
        beat.wait(20)
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)
