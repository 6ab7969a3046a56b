"""README's bot-writer quickstart, run as written: a real server (the main job, on the embedded
default), the starter bot as a real process, and the commands through bash with curl and jq.
Only the ports change (free ones instead of 8000 and 8080)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
HEADING = "## Write a bot: quickstart"

pytestmark = pytest.mark.skipif(
    not IN_CI and not (shutil.which("curl") and shutil.which("jq")),
    reason="the quickstart uses curl and jq (CI installs them)",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def quickstart() -> str:
    """Every shell block of the section, in order (one shell runs them all)."""
    start = README.index(HEADING)
    section = README[start:README.find("\n## ", start + len(HEADING))]
    return "\n".join(block.split("```", 1)[0] for block in section.split("```sh")[1:])


def embedded_env(tmp_path: Path) -> dict[str, str]:
    """The embedded default (SQLite, no broker), in a database of this test's own."""
    env = {**os.environ, "SQLITE_PATH": str(tmp_path / "db.sqlite3"), "PYTHONUNBUFFERED": "1"}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "ARENA_PRODUCTION"):
        env.pop(name, None)
    return env


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: int = 120) -> None:
    for _ in range(seconds * 10):  # bounded
        assert process.poll() is None, "the server exited"
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=5):
            return
        time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


@contextlib.contextmanager
def main_job(env: dict[str, str], port: int, log: Path) -> Iterator[None]:
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "arena_main", "--addr", f"127.0.0.1:{port}"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
        try:
            wait_for(f"http://127.0.0.1:{port}/healthz/", server)
            yield
        finally:
            server.terminate()
            server.wait(30)


def test_the_readme_quickstart_works_as_written(tmp_path: Path) -> None:
    env = embedded_env(tmp_path)
    manage = [sys.executable, "manage.py"]
    for step in (["migrate", "--no-input"],
                 # What `dev.py run` does first: the demo registers the reference bots.
                 ["demo", "--games-per-pairing", "1", "--no-starter"]):
        done = subprocess.run([*manage, *step], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr

    server_port, bot_port, reference_port = free_port(), free_port(), free_port()
    script = quickstart()
    assert "127.0.0.1:8000" in script and "8080" in script and "8081" in script
    script = script.replace("127.0.0.1:8000", f"127.0.0.1:{server_port}")
    script = script.replace("8080", str(bot_port)).replace("8081", str(reference_port))
    if not (ROOT / ".venv" / "bin" / "python").exists():  # the suite runs from another env
        script = script.replace(".venv/bin/python", sys.executable)
    output = tmp_path / "quickstart.log"
    with main_job(env, server_port, tmp_path / "server.log"), output.open("w") as out:
        # Output to a file, not a pipe: the starter bot (in background) keeps its copy open.
        shell = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", script], cwd=ROOT, env=env,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            shell.wait(timeout=600)
        finally:
            with contextlib.suppress(ProcessLookupError):  # the starter bot, in background
                os.killpg(shell.pid, signal.SIGTERM)
    text = output.read_text()
    assert shell.returncode == 0, text
    # The starter bot, then a reference bot served as one of your own.
    assert text.replace(" ", "").count('"verified":true') == 2, text
    assert "bad or stale signature" in text  # the unsigned call was refused
    assert re.search(r"Tournament \d+ \(.*\) is finished", text), text
    table = text.split("is finished", 1)[1]
    assert "my-bot" in table and "heuristic" in table
    assert "10/10 games" in text, text  # one pairing, ten games
