"""A real gunicorn on 127.0.0.1 serving the test's own (committed) database, with whatever
environment a test gives it: an unreachable broker or cache, small long-poll caps, ..."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A port nothing listens on (after the call): also a closed port for an unreachable
    service."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def stalled_server(held: list[socket.socket] | None = None) -> Iterator[int]:
    """A TCP server that accepts connections and never answers a byte: a Redis stopped with
    ``kill -STOP`` (its kernel still completes the handshake) or behind a half-open connection.
    Yields its port; ``held`` (if given) gets each connection it accepted."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    held = [] if held is None else held

    def accept() -> None:
        with contextlib.suppress(OSError):  # the listener closed: the test is over
            while True:
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True, name="stalled-server")
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept (close would not)
        listener.close()
        thread.join(5)
        for sock in held:
            sock.close()


@contextlib.contextmanager
def broken_broker(kind: str) -> Iterator[str]:
    """A broker URL that fails: ``"dead"`` (nothing listens: refused at once) or
    ``"stalled"`` (``stalled_server``)."""
    if kind == "dead":
        yield f"redis://127.0.0.1:{free_port()}/0"
        return
    with stalled_server() as port:
        yield f"redis://127.0.0.1:{port}/0"


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgresql://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


_serving: dict[int, subprocess.Popen[bytes]] = {}


def stop_serving(port: int) -> None:
    """Stop the server on ``port`` as a deploy does (SIGTERM to gunicorn), while the test still
    holds requests to it."""
    _serving[port].terminate()


@contextlib.contextmanager
def live_server(
    env: dict[str, str | None] | None = None,
    *,
    workers: int = 1,
    threads: int = 4,
    serving: str = "asgi",
    port: int | None = None,
) -> Iterator[int]:
    """gunicorn on a free port, serving as compose does (``serving="asgi"``: uvicorn workers
    running ``arena.asgi``, ``threads`` of them for the request/response endpoints) or with
    gthread workers (``"wsgi"``); ``env`` adds variables (None removes one). Without a broker
    in ``env`` tasks run in-process. Yields the port (``port``, or a free one)."""
    port = port or free_port()
    full = {**os.environ, "DATABASE_URL": database_url(), "DEBUG": "false",
            "LOG_LEVEL": "WARNING"}
    full.pop("CELERY_BROKER_URL", None)
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    if serving == "asgi":
        full.setdefault("WEB_THREADS", str(threads))
        app = ["arena.asgi", "--worker-class=arena.workers.Worker"]
    else:
        app = ["arena.wsgi", "--worker-class=gthread", f"--threads={threads}"]
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *app, f"--bind=127.0.0.1:{port}",
         f"--workers={workers}", "--log-level=warning"],
        cwd=ROOT, env=full,
    )
    _serving[port] = process
    try:
        for _ in range(300):  # bounded: 30 s
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.1)
        yield port
    finally:
        _serving.pop(port, None)
        process.terminate()
        process.wait(20)


class CaseInsensitiveHeaders(dict[str, str]):
    """Response headers by name, in any case (HTTP header names are case-insensitive)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__(pairs)
        self._lower = {name.lower(): value for name, value in pairs}

    def __getitem__(self, name: str) -> str:
        return self._lower[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lower

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return self._lower.get(name.lower(), default)


def call(
    port: int,
    method: str,
    path: str,
    *,
    key: str | None = None,
    body: Any = None,
    basic: tuple[str, str] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, Any, dict[str, str]]:
    """One request on its own connection: (status, JSON body (None if empty), headers)."""
    sent = {"Content-Type": "application/json", **(headers or {})}
    if key is not None:
        sent["Authorization"] = f"Token {key}"
    if basic is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(":".join(basic).encode()).decode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, None if body is None else json.dumps(body), sent)
        response = conn.getresponse()
        raw = response.read().decode()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw  # an HTML error page: shown as it is in a failed assertion
        # Names as sent, found whatever their case (an ASGI server sends them in lower case).
        return response.status, body, CaseInsensitiveHeaders(response.getheaders())
    finally:
        conn.close()


def start_a_game(port: int, alice_key: str, bob_key: str) -> dict[str, Any]:
    """A running two-seat single-hand game (a minute a turn) made through the API."""
    status, game, _ = call(port, "POST", "/api/games/", key=alice_key, body={
        "seats": 2, "turn_seconds": 60, "options": {"single_hand": True}})
    assert status == 201, game
    assert call(port, "POST", f"/api/games/{game['id']}/join/", key=bob_key)[0] == 200
    status, started, _ = call(port, "POST", f"/api/games/{game['id']}/start/", key=alice_key)
    assert status == 200, started  # arms the first turn's clock
    return started


def play_one_move(
    port: int, game_id: int, keys: list[str], query: str = ""
) -> tuple[int, Any]:
    """The awaited seat (``keys`` by seat) plays its first legal move: (status, body)."""
    view = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[0])[1]
    seat = view["view"]["awaiting"]
    view = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[seat])[1]
    move = view["view"]["legal_moves"][0]
    status, body, _ = call(port, "POST", f"/api/games/{game_id}/moves/{query}", key=keys[seat],
                           body={"version": view["version"], "move": move})
    return status, body
