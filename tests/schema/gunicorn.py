"""A real server for a test: gunicorn on 127.0.0.1, on a free port, stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def gunicorn(
    *, workers: int, threads: int, env: dict[str, str | None] | None = None
) -> Iterator[int]:
    """The app under gunicorn (gthread workers); yields the port once it accepts connections.
    ``env`` adds to the environment (None: takes the variable away)."""
    port = free_port()
    # No broker: no turn clock runs out in these tests.
    changes = {"DEBUG": "false", "LOG_LEVEL": "WARNING", "CELERY_BROKER_URL": None, **(env or {})}
    environment = {**os.environ}
    for name, value in changes.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "arena.wsgi", f"--bind=127.0.0.1:{port}",
         f"--workers={workers}", "--worker-class=gthread", f"--threads={threads}",
         "--log-level=warning"],
        cwd=ROOT, env=environment,
    )
    try:
        for _ in range(300):  # bounded: 30 s
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            assert process.poll() is None, "gunicorn exited"
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(20)
