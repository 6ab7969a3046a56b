"""Benchmark: two bots playing docs/api.md's minimal bot loop (httpx), and where a move's
handoff from one to the other goes.

Run: ``python bench/handoff.py SERVER`` where SERVER is ``runserver`` (the embedded default:
``dev.py run``'s server on SQLite), ``django-runserver`` (Django's own, as the main job was
before: Nagle's algorithm on) or ``gunicorn`` (2 workers x 8 threads, on ``DATABASE_URL``'s
PostgreSQL, which must be set). ``--moves`` (default 400) moves at least are played in
single-hand games by one pair of bots, each on its own keep-alive connection, exactly as the
docs' loop does: post the move with ``?wait=25&until=turn``, long-poll the view when not
awaited. ``--nodelay`` also sets TCP_NODELAY on the bots' sockets (what a bot writer can do).

Figures: moves/s, and the handoff: from one move's record (its ``created_at``) to the next
one's, when the seat changes; the same clock, one machine. Printed with percentiles, the
share of handoffs over 35 ms (the mark of Nagle's algorithm meeting a delayed ACK: 40 ms on
Linux), and split in three: commit to the next bot holding the new version, the bot's own
time, sending its move to the commit.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server(kind: str) -> Iterator[int]:
    port = free_port()
    env = {**os.environ, "LOG_LEVEL": "WARNING", "THROTTLE_SIGNUP": "1000/hour"}
    env.pop("CELERY_BROKER_URL", None)
    folder = tempfile.mkdtemp(prefix="uno-handoff-")
    if kind in ("runserver", "django-runserver"):
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = str(Path(folder) / "db.sqlite3")
        command = [sys.executable, "manage.py", "arena_main", "--addr", f"127.0.0.1:{port}"]
        if kind == "django-runserver":  # Django's own, as the main job was before (Nagle on)
            command = [sys.executable, "manage.py", "runserver", "--noreload",
                       f"127.0.0.1:{port}"]
    else:
        assert env.get("DATABASE_URL", "").startswith("postgres"), "set DATABASE_URL"
        env["DEBUG"] = "false"
        command = [sys.executable, "-m", "gunicorn", "arena.wsgi", f"--bind=127.0.0.1:{port}",
                   "--workers=2", "--worker-class=gthread", "--threads=8",
                   "--log-level=warning"]
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(20)


def client(port: int, nodelay: bool, token: str | None = None) -> httpx.Client:
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)] if nodelay else []
    headers = {"Authorization": f"Token {token}"} if token else {}
    return httpx.Client(base_url=f"http://127.0.0.1:{port}/api", headers=headers, timeout=30,
                        transport=httpx.HTTPTransport(socket_options=options))


def account(port: int, nodelay: bool) -> str:
    with client(port, nodelay) as api:
        name, password = f"bot-{uuid.uuid4().hex[:10]}", "a long passphrase 42"
        api.post("/accounts/", json={"username": name, "password": password}).raise_for_status()
        made = api.post("/tokens/", json={"username": name, "password": password})
        made.raise_for_status()
        return str(made.json()["key"])


def play(api: httpx.Client, game: int, rng: random.Random, marks: dict[int, float]) -> None:
    """docs/api.md's minimal bot loop, verbatim but for the random source and the marks:
    when this bot first held each version it then moved at (wall clock), and when it sent that
    move (key: minus the version)."""

    def send(method: str, path: str, **kwargs: Any) -> httpx.Response:
        while True:
            response = api.request(method, path, **kwargs)
            if response.status_code != 429 and response.status_code < 500:
                return response
            time.sleep(float(response.headers.get("Retry-After", "1")))

    response = send("GET", f"/games/{game}/view/")
    while True:
        if response.status_code in (401, 403, 404):
            raise SystemExit(f"game {game}: {response.status_code} {response.json()['detail']}")
        if response.status_code not in (200, 201, 304, 409):
            response.raise_for_status()
        if response.status_code in (200, 201):
            received = time.time()
            body = response.json()
            if body["status"] in ("finished", "aborted"):
                break
            view = body["view"]
            if body["status"] == "running" and view["awaiting"] == body["seat"]:
                move = rng.choice(view["legal_moves"])
                marks.setdefault(body["version"], received)
                marks[-body["version"]] = time.time()
                response = send("POST", f"/games/{game}/moves/",
                                params={"wait": 25, "until": "turn"},
                                json={"version": body["version"], "move": move},
                                headers={"Idempotency-Key": str(uuid.uuid4())})
                continue
        etag = response.headers.get("ETag", "")
        response = send("GET", f"/games/{game}/view/", params={"wait": 25, "until": "turn"},
                        headers={"If-None-Match": etag} if etag else {})


def moves_of(api: httpx.Client, game: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    page: int | None = 1
    while page:
        body = api.get(f"/games/{game}/moves/", params={"page_size": 1000, "page": page}).json()
        records += body["results"]
        page = page + 1 if body["next"] else None
    return records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("server", choices=["runserver", "django-runserver", "gunicorn"])
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--nodelay", action="store_true")
    args = parser.parse_args()
    with server(args.server) as port:
        keys = [account(port, args.nodelay), account(port, args.nodelay)]
        apis = [client(port, args.nodelay, key) for key in keys]
        handoffs: list[float] = []
        same_seat: list[float] = []
        # Each handoff in three parts: commit to the next bot holding the new version (wake
        # and answer), holding it to sending the move (the bot's own time), sending to commit.
        parts: list[tuple[float, float, float]] = []
        played, seconds, rng = 0, 0.0, random.Random(1)
        while played < args.moves:
            game = apis[0].post("/games/", json={"seats": 2, "options": {"single_hand": True},
                                                 "turn_seconds": 3600}).json()["id"]
            apis[1].post(f"/games/{game}/join/").raise_for_status()
            apis[0].post(f"/games/{game}/start/").raise_for_status()
            marks: dict[int, float] = {}
            bots = [threading.Thread(target=play,
                                     args=(api, game, random.Random(rng.random()), marks))
                    for api in apis]
            started = time.perf_counter()
            for bot in bots:
                bot.start()
            for bot in bots:
                bot.join()
            seconds += time.perf_counter() - started
            records = moves_of(apis[0], game)
            played += len(records)
            times = [datetime.fromisoformat(r["created_at"]) for r in records]
            handoffs += [
                (b - a).total_seconds() * 1000
                for a, b, ra, rb in zip(times, times[1:], records, records[1:], strict=False)
                if ra["seat"] != rb["seat"]
            ]
            stamps = [t.timestamp() for t in times]
            for i in range(1, len(records)):
                version = records[i]["version"] - 1  # the version the move was sent with
                if records[i - 1]["seat"] != records[i]["seat"] and version in marks:
                    parts.append((
                        (marks[version] - stamps[i - 1]) * 1000,
                        (marks[-version] - marks[version]) * 1000,
                        (stamps[i] - marks[-version]) * 1000,
                    ))
            same_seat += [
                (b - a).total_seconds() * 1000
                for a, b, ra, rb in zip(times, times[1:], records, records[1:], strict=False)
                if ra["seat"] == rb["seat"]
            ]
        handoffs.sort()

        def pct(q: float) -> float:
            return handoffs[min(len(handoffs) - 1, int(q * len(handoffs)))]

        slow = sum(1 for h in handoffs if h > 35) / len(handoffs)
        print(f"{args.server}{' nodelay' if args.nodelay else ''}: {played / seconds:.1f} moves/s "
              f"({played} moves); handoff p50 {pct(0.5):.1f} ms p90 {pct(0.9):.1f} ms "
              f"p99 {pct(0.99):.1f} ms max {handoffs[-1]:.0f} ms; over 35 ms: {slow:.0%}; "
              f"same seat again: {len(same_seat)}, max {max(same_seat, default=0):.0f} ms")
        for index, name in enumerate(("commit -> next bot has it", "bot thinks",
                                      "sent -> committed")):
            values = sorted(p[index] for p in parts)
            print(f"  {name}: p50 {values[len(values) // 2]:.1f} ms "
                  f"p90 {values[int(0.9 * len(values))]:.1f} ms")


if __name__ == "__main__":
    main()
