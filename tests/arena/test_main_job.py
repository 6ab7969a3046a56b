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
from typing import Any

import pytest

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


def test_dev_py_run_plays_the_demo_then_serves_its_leaderboard(tmp_path: Path) -> None:
    """README's run command, past the install: migrate, the demo admin, the demo tournament,
    then the main job serving the results (read here through the API as the demo admin)."""
    import base64
    import json
    import re

    port = _free_port()
    env = {**os.environ, "SQLITE_PATH": str(tmp_path / "db.sqlite3"), "PYTHONUNBUFFERED": "1"}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "ARENA_PRODUCTION"):
        env.pop(name, None)  # the embedded default, as on a fresh machine
    run = (
        "import sys, dev; dev.ensure_installed = lambda extras: None; "  # already installed
        f"dev.PYTHON = {sys.executable!r}; sys.argv = ['dev.py', 'run', '--addr', "
        f"'127.0.0.1:{port}']; dev.main()"
    )
    log = tmp_path / "run.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-c", run], cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            for _ in range(3000):  # bounded: 300 s (migrations and the demo come first)
                assert process.poll() is None, log.read_text()
                with contextlib.suppress(OSError), urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/healthz/", timeout=5
                ):
                    break
                time.sleep(0.1)
            text = log.read_text()
            password = re.search(r"password '([^']+)'", text).group(1)  # type: ignore[union-attr]
            basic = base64.b64encode(f"admin:{password}".encode()).decode()
            token = urllib.request.Request(f"http://127.0.0.1:{port}/api/tokens/", data=b"",
                                           headers={"Authorization": f"Basic {basic}"})
            with urllib.request.urlopen(token, timeout=30) as answer:
                key = json.load(answer)["key"]
            board = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/leaderboard/?rule_set=single_hand",
                headers={"Authorization": f"Token {key}"},
            )
            with urllib.request.urlopen(board, timeout=30) as answer:
                rows = json.load(answer)["results"]
        finally:
            os.killpg(process.pid, 15)
            process.wait(30)
    assert "Leaderboard (single_hand)" in text, text
    assert f"http://127.0.0.1:{port}/admin/" in text  # where to browse it
    assert {row["name"] for row in rows} == {"random", "greedy", "heuristic", "starter"}
    assert all(row["games"] > 0 for row in rows)


def test_dev_py_run_skips_the_demo_with_no_demo_and_names_the_served_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(dev, "ensure_installed", lambda extras: None)
    monkeypatch.setattr(dev, "manage", lambda *args: calls.append(args))
    monkeypatch.delenv("ARENA_PRODUCTION", raising=False)
    dev.cmd_run(["--addr", "127.0.0.1:9000"])
    assert calls == [("migrate", "--no-input"), ("demo_admin",),
                     ("demo", "--admin-url", "http://127.0.0.1:9000/admin/"),
                     ("arena_main", "--addr", "127.0.0.1:9000")]
    calls.clear()
    dev.cmd_run(["--no-demo", "--addr=0.0.0.0:8000"])
    assert calls == [("migrate", "--no-input"), ("demo_admin",),
                     ("arena_main", "--addr=0.0.0.0:8000")]


@pytest.mark.django_db
def test_served_to_the_network_it_answers_requests_by_this_machines_address(
    client: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dev.py run --addr 0.0.0.0:8000`` is "for your whole network": a request from another
    machine names this one by its address, which the default ALLOWED_HOSTS refused (400)."""
    from arena.management.commands import arena_main

    settings.ALLOWED_HOSTS = list(settings.ALLOWED_HOSTS)  # put back after the test
    monkeypatch.delenv("ALLOWED_HOSTS", raising=False)
    assert socket.gethostname() in arena_main._this_machine()
    machine = ["arena-box", "arena-box.local", "10.1.2.3", "[fd00::9]"]
    monkeypatch.setattr(arena_main, "_this_machine", lambda: machine)
    assert arena_main.allow_network_hosts("127.0.0.1:8000") == []
    assert arena_main.allow_network_hosts("0.0.0.0:8000") == machine
    for host in machine:
        assert client.get("/healthz/", HTTP_HOST=f"{host}:8000").status_code == 200
    assert client.get("/healthz/", HTTP_HOST="rebound.example:8000").status_code == 400
    assert arena_main.browsable("0.0.0.0:8000") == "127.0.0.1:8000"


def test_served_to_the_network_it_keeps_the_allowed_hosts_it_was_given(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.management.commands.arena_main import allow_network_hosts

    monkeypatch.setenv("ALLOWED_HOSTS", "arena.lan")
    settings.ALLOWED_HOSTS = ["arena.lan"]
    assert allow_network_hosts("0.0.0.0:8000") == []
    assert settings.ALLOWED_HOSTS == ["arena.lan"]
    monkeypatch.setenv("ALLOWED_HOSTS", " ")  # empty, as the settings read it: not given
    assert allow_network_hosts("0.0.0.0:8000") != []
