"""The main job (``dev.py run``: runserver): what it logs for a client's mistake (one line), and
how it sends answers."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_runserver_logs_each_client_error_once(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "SQLITE_PATH": str(tmp_path / "db.sqlite3"), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)  # these requests read no tables
    log = tmp_path / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "arena_main", "--addr", f"127.0.0.1:{port}"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(300):  # bounded: 30 s
                with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", port), 0.1
                ):
                    break
                time.sleep(0.1)
            for path in ("/api/games/", "/no-such-page/"):  # 401, 404
                with contextlib.suppress(urllib.error.HTTPError):
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz/", timeout=30):
                pass  # answered after the two above, so their lines are written
        finally:
            server.terminate()
            server.wait(20)
    lines = log.read_text().splitlines()
    assert len([line for line in lines if "/api/games/" in line]) == 1, lines
    assert len([line for line in lines if "/no-such-page/" in line]) == 1, lines


def test_the_main_job_turns_nagles_algorithm_off_on_every_connection() -> None:
    """runserver sends a response's headers and body apart: with Nagle on, the body waited
    for a keep-alive client's delayed ACK, 40 ms per answer."""
    from django.core.servers.basehttp import WSGIRequestHandler

    from arena.management.commands.arena_main import NoDelayRunserver, NoDelayWSGIServer

    assert NoDelayRunserver.server_cls is NoDelayWSGIServer
    server = NoDelayWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    try:
        with socket.create_connection(server.server_address[:2], timeout=10):
            accepted, _ = server.get_request()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.server_close()
