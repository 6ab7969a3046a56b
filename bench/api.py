"""Benchmark: moves/s of real games over HTTP against a bare DRF endpoint, same server.

Run: ``python bench/api.py [--clients 16] [--seconds 20]``. It needs PostgreSQL: with
``DATABASE_URL`` set it uses that database, otherwise it starts a throwaway PostgreSQL 15 from
/usr/lib/postgresql/15/bin (as CI does). It starts gunicorn as compose does (``--workers``
uvicorn worker processes running ``arena.asgi``, with ``--threads`` threads each for the
request/response endpoints; ``--serving wsgi``: gthread workers, the serving before) on
127.0.0.1, then alternates two loads for the same time:

* api: ``clients`` players, in pairs, each pair playing single-hand games to the end, as the
  docs tell a bot to: when awaited, it posts a random legal move (uniform among plays when it
  has one, else among all legal moves) with ``?wait=&until=turn`` (play-and-wait: the answer
  is its view when its turn comes again), otherwise it long-polls ``view?wait=&until=turn``
  with If-None-Match.
  Figures: applied moves/s, and move latency from sending the POST to the server recording
  the move (the record's ``created_at``; same machine, same clock), since a play-and-wait
  answer only comes after the opponent's reply.
* bare: ``clients`` threads POSTing to ``/bench/bare/<id>/`` (token auth, one indexed SELECT,
  one UPDATE) as fast as they can.

The last line is exactly ``api: X moves/s p50 A ms p99 B ms; bare: Y req/s p99 C ms; ratio: Z``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import queue
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from bench.cpu import Sampler, combined  # noqa: E402

PG_BIN = Path("/usr/lib/postgresql/15/bin")


# --- infrastructure ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """The DATABASE_URL to use: the environment's, or a throwaway server's."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        yield url
        return
    folder = Path(tempfile.mkdtemp(prefix="uno-arena-bench-"))
    port = free_port()
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        shutil.chown(folder, "postgres")
    data = folder / "data"
    run = lambda *cmd: subprocess.run([*as_postgres, *map(str, cmd)], check=True,  # noqa: E731
                                      stdout=subprocess.DEVNULL)
    run(PG_BIN / "initdb", "-D", data, "-U", "postgres", "--auth=trust")
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
    run(PG_BIN / "pg_ctl", "-D", data, "-l", folder / "log", "-w", "-o", options, "start")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        run(PG_BIN / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def server_environment(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="bench_settings",
        PYTHONPATH=os.pathsep.join([str(BENCH), str(ROOT)]),
        DEBUG="false",
        LOG_LEVEL="WARNING",
    )
    env.pop("CELERY_BROKER_URL", None)  # no turn-clock tasks: clocks are set to an hour
    return env


def prepare(env: dict[str, str], clients: int) -> list[str]:
    """Migrate, make the bare endpoint's table, and one user with a token per client."""
    script = f"""
import django; django.setup()
from django.core.management import call_command
from django.db import connection
from django.contrib.auth import get_user_model
from arena.accounts.services import token_create
call_command("migrate", verbosity=0)
with connection.cursor() as c:
    c.execute("CREATE TABLE IF NOT EXISTS bench_counter (id integer PRIMARY KEY, n integer)")
    c.execute("INSERT INTO bench_counter SELECT g, 0 FROM generate_series(1, 1000) g "
              "ON CONFLICT DO NOTHING")
stamp = {time.time_ns()}
keys = []
for i in range({clients}):
    user = get_user_model().objects.create_user(f"bench-{{stamp}}-{{i}}")
    keys.append(token_create(user=user)[1])
print(" ".join(keys))
"""
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return out.stdout.split()


@contextlib.contextmanager
def gunicorn(env: dict[str, str], workers: int, threads: int, serving: str) -> Iterator[int]:
    port = free_port()
    if serving == "asgi":  # compose's: uvicorn workers, ``threads`` for request/response
        env = {**env, "WEB_THREADS": str(threads)}
        app = ["arena.asgi", "--worker-class=arena.workers.Worker"]
    else:  # gunicorn's gthread workers (the serving before)
        app = ["arena.wsgi", "--worker-class=gthread", f"--threads={threads}"]
    command = [
        sys.executable, "-m", "gunicorn", *app, f"--bind=127.0.0.1:{port}",
        f"--workers={workers}", "--keep-alive=30", "--log-level=warning",
    ]
    process = subprocess.Popen(command, env=env, cwd=ROOT)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


# --- clients ----------------------------------------------------------------------------------
class Client:
    """One keep-alive HTTP connection with a token."""

    def __init__(self, port: int, key: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        data = None if body is None else json.dumps(body)
        try:
            self.connection.request(method, path, data, {**self.headers, **(headers or {})})
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # The server closed an idle keep-alive connection: reconnect once.
            self.connection.close()
            self.connection.request(method, path, data, {**self.headers, **(headers or {})})
            response = self.connection.getresponse()
        raw = response.read()
        return response.status, (json.loads(raw) if raw else None), response


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []

    def add(self, seconds: float) -> None:
        with self.lock:
            self.latencies.append(seconds)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def choose(moves: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    plays = [m for m in moves if m["type"] == "play"]
    return rng.choice(plays or moves)


class Pair:
    """Two players who play single hands against each other until the deadline."""

    def __init__(self, port: int, keys: tuple[str, str], stats: Stats, seed: int) -> None:
        self.port, self.keys, self.stats, self.seed = port, keys, stats, seed
        self.games: tuple[queue.Queue[int], queue.Queue[int]] = (queue.Queue(), queue.Queue())
        # One connection per player for setting tables up, kept for every game (as a bot
        # would keep its own), beside the connection each player plays on.
        self.lobby = (Client(port, keys[0]), Client(port, keys[1]))

    def new_game(self) -> None:
        """Seat 0 creates, seat 1 joins, seat 0 starts (on their lobby connections)."""
        creator, joiner = self.lobby
        status, body, _ = creator.call(
            "POST", "/api/games/",
            {"seats": 2, "options": {"single_hand": True}, "turn_seconds": 3600},
        )
        assert status == 201, body
        game_id = body["id"]
        status, body, _ = joiner.call("POST", f"/api/games/{game_id}/join/")
        assert status == 200, body
        status, body, _ = creator.call("POST", f"/api/games/{game_id}/start/")
        assert status == 200, body
        for games in self.games:
            games.put(game_id)

    def play(self, seat: int, deadline: float) -> None:
        rng = random.Random(self.seed * 2 + seat)
        client = Client(self.port, self.keys[seat])
        while time.perf_counter() < deadline:
            if seat == 0:
                self.new_game()
            try:
                game_id = self.games[seat].get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                return
            self.play_one(client, game_id, seat, rng, deadline)

    def play_one(
        self, client: Client, game_id: int, seat: int, rng: random.Random, deadline: float
    ) -> None:
        path = f"/api/games/{game_id}"
        status, body, response = client.call("GET", f"{path}/view/")
        etag = response.getheader("ETag") or ""
        while (left := deadline - time.perf_counter()) > 0:
            if status in (200, 201):  # a view: fetched, long-polled, or returned by our move
                if body["status"] != "running":
                    return
                view = body["view"]
                if view["awaiting"] == seat:
                    move = choose(view["legal_moves"], rng)
                    sent = time.time()
                    status, body, response = client.call(
                        "POST",
                        f"{path}/moves/?wait={min(5.0, left):.2f}&until=turn",
                        {"version": body["version"], "move": move},
                    )
                    if status == 201:
                        recorded = datetime.fromisoformat(body["played"]["created_at"])
                        if time.perf_counter() <= deadline:
                            self.stats.add(recorded.timestamp() - sent)
                        etag = response.getheader("ETag") or ""
                        continue
                    assert status == 409, body  # stale: look again
            status, body, response = client.call(
                "GET", f"{path}/view/?wait={min(5.0, left):.2f}&until=turn",
                headers={"If-None-Match": etag},
            )
            if status == 200:
                etag = response.getheader("ETag") or ""


def run_api(port: int, keys: list[str], seconds: float) -> tuple[int, list[float], float]:
    stats = Stats()
    pairs = [Pair(port, (keys[i], keys[i + 1]), stats, i) for i in range(0, len(keys) - 1, 2)]
    deadline = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=pair.play, args=(seat, deadline), daemon=True)
        for pair in pairs
        for seat in (0, 1)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 30)
    # Only moves answered before the deadline count, over exactly the measured window.
    return len(stats.latencies), stats.latencies, seconds


def run_bare(port: int, keys: list[str], seconds: float) -> tuple[int, list[float], float]:
    stats = Stats()
    deadline = time.perf_counter() + seconds

    def hammer(key: str, seed: int) -> None:
        client = Client(port, key)
        rng = random.Random(seed)
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            status, body, _ = client.call("POST", f"/bench/bare/{rng.randint(1, 1000)}/", {})
            assert status == 200, body
            if time.perf_counter() <= deadline:
                stats.add(time.perf_counter() - started)

    threads = [threading.Thread(target=hammer, args=(k, i), daemon=True) for i, k in
               enumerate(keys)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 30)
    return len(stats.latencies), stats.latencies, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (even)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per load")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two loads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=16, help="threads per worker")
    parser.add_argument("--serving", choices=["asgi", "wsgi"], default="asgi",
                        help="compose's uvicorn workers running arena.asgi (default), or "
                        "gthread workers running arena.wsgi")
    args = parser.parse_args()
    with postgres() as database_url:
        env = server_environment(database_url)
        keys = prepare(env, args.clients)
        with gunicorn(env, args.workers, args.threads, args.serving) as port:
            kind = "arena.asgi (uvicorn)" if args.serving == "asgi" else "gthread"
            print(f"gunicorn: {args.workers} {kind} workers x {args.threads} threads; "
                  f"PostgreSQL; {args.clients} clients; {args.rounds} x {args.seconds:.0f} s "
                  "per load, alternating")
            run_bare(port, keys, 2)  # warm-up: connections, caches
            run_api(port, keys, 2)
            api_moves, api_lat, api_time, bare_reqs, bare_lat, bare_time = 0, [], 0.0, 0, [], 0.0
            slice_ = args.seconds / args.rounds
            api_cpu, bare_cpu = [], []
            for _ in range(args.rounds):
                with Sampler() as cpu:
                    count, latencies, elapsed = run_bare(port, keys, slice_)
                bare_cpu.append(cpu.usage)
                bare_reqs, bare_time = bare_reqs + count, bare_time + elapsed
                bare_lat += latencies
                with Sampler() as cpu:
                    count, latencies, elapsed = run_api(port, keys, slice_)
                api_cpu.append(cpu.usage)
                api_moves, api_time = api_moves + count, api_time + elapsed
                api_lat += latencies
    # Where each load's CPU went (the clients share the machine with the server): a ratio
    # below the goal says more when the server's CPU per move is known beside it.
    print(f"  api, {combined(api_cpu).per(api_moves, 'move')}")
    print(f"  bare, {combined(bare_cpu).per(bare_reqs, 'request')}")
    x, y = api_moves / api_time, bare_reqs / bare_time
    print(f"api: {api_moves} moves in {api_time:.1f} s; bare: {bare_reqs} requests in "
          f"{bare_time:.1f} s")
    print(
        f"api: {x:.0f} moves/s p50 {percentile(api_lat, 0.5):.1f} ms "
        f"p99 {percentile(api_lat, 0.99):.1f} ms; "
        f"bare: {y:.0f} req/s p99 {percentile(bare_lat, 0.99):.1f} ms; ratio: {x / y:.2f}"
    )


if __name__ == "__main__":
    main()
