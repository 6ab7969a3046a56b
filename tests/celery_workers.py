"""Real ``celery worker`` processes for the tests that need one (they need PostgreSQL and
Redis, and run in CI): each on a queue of the test's own, so it sees only that test's tasks."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.celery import app as celery_app
from tests.live_server import database_url

ROOT = Path(__file__).resolve().parents[1]


def private_queue(monkeypatch: pytest.MonkeyPatch, prefix: str) -> str:
    """A fresh queue this process sends its tasks to. Both names: celery 5.6 lets the
    namespaced one (read from Django's settings) win over ``task_default_queue``."""
    queue = f"{prefix}-{uuid.uuid4().hex}"
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_DEFAULT_QUEUE", queue)
    return queue


def start_worker(queue: str, **env: str) -> subprocess.Popen[bytes]:
    """A solo worker reading ``queue``, on the test database; its own follow-up tasks go to
    ``queue`` too (``CELERY_QUEUE``)."""
    full = {**os.environ, "DATABASE_URL": database_url(), "CELERY_QUEUE": queue, **env}
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool=solo",
         "--loglevel=WARNING", "-Q", queue],
        cwd=ROOT, env=full,
    )


def stop_all(processes: list[subprocess.Popen[bytes]], seconds: float = 20) -> None:
    """Ask each process still running to stop (SIGTERM: a worker's warm shutdown), then kill
    whichever has not within ``seconds``."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
