"""Benchmark: thousands of open waits (event streams) while 16 clients play, against the same
play with no waits open, in the same run.

Run: ``python bench/waiting.py [--waits 2000] [--seconds 20]``. It needs PostgreSQL: with
``DATABASE_URL`` set it uses that database, otherwise it starts a throwaway PostgreSQL 15 (as
bench/api.py does), and it serves as compose does (gunicorn, ``--workers`` uvicorn workers
running ``arena.asgi``). Then:

* players: ``--players`` clients (16), in pairs, each pair playing single-hand games to the
  end through ``GET /api/stream/`` (one stream each): a ``turn`` event is answered with a
  random legal move (``POST moves/``, the version the event carried); at an ``ended`` event
  seat 0 sets up the next game. Figures: move latency (the POST's round trip), and the
  wake-up latency: from the moment a move's response reaches its mover to the moment the
  opponent's stream delivers its turn at that version (0 when the stream was first);
* waits: ``--waits`` streams held open by ``waits / 10`` other users, ten each, sitting two
  by two at running games where nobody moves (their streams get their snapshot, then only
  heartbeats).

The play runs ``--seconds`` with no waits open (idle) and as long with all of them open,
alternating in ``--rounds`` (the waits are opened and closed each round).
The last line is exactly
``waiting: W open; move p99 A ms vs B ms idle; ratio: R; wake p99: L ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api
from api import ROOT, choose, percentile, postgres, server_environment

WAITS_PER_USER = 10


@contextlib.contextmanager
def gunicorn(env: dict[str, str], workers: int, threads: int) -> Iterator[int]:
    """Compose's serving, as bench/api.py starts it; killed if a graceful stop takes long."""
    port = api.free_port()
    command = [
        sys.executable, "-m", "gunicorn", "arena.asgi", "--worker-class=arena.workers.Worker",
        f"--bind=127.0.0.1:{port}", f"--workers={workers}", "--keep-alive=30",
        "--log-level=warning", "--graceful-timeout=5",
    ]
    process = subprocess.Popen(command, env={**env, "WEB_THREADS": str(threads)}, cwd=ROOT)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


# --- setup ---------------------------------------------------------------------------------
def prepare(env: dict[str, str], players: int, waiters: int) -> tuple[list[str], list[str]]:
    """Migrate; tokens for the players and the waiting users; the waiting users seated two by
    two at running games whose clocks run an hour (nobody moves in them)."""
    script = f"""
import django; django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from arena.accounts.services import token_create
from games import services
call_command("migrate", verbosity=0)
stamp = {time.time_ns()}
def make(prefix, n):
    users = [get_user_model().objects.create_user(f"{{prefix}}-{{stamp}}-{{i}}") for i in range(n)]
    return users, [token_create(user=u)[1] for u in users]
_, players = make("player", {players})
waiters, waiter_keys = make("waiter", {waiters})
for a, b in zip(waiters[0::2], waiters[1::2]):
    game = services.game_create(user=a, options={{"single_hand": True}}, seats=2,
                                turn_seconds=3600, max_strikes=3, join=True)
    services.seat_join(game_id=game.pk, user=b, index=None, bot_id=None)
    services.game_start(game_id=game.pk, user=a)
print(" ".join(players)); print(" ".join(waiter_keys))
"""
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    return lines[-2].split(), lines[-1].split()


# --- a small HTTP/1.1 client on asyncio streams -----------------------------------------------
class Connection:
    """One keep-alive connection with a token."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {self.key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        status, headers = await read_head(self.reader)
        if headers.get("transfer-encoding") == "chunked":
            raw = b""
            async for chunk in chunks(self.reader):
                raw += chunk
        else:
            raw = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, json.loads(raw) if raw else None


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed")
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers


async def chunks(reader: asyncio.StreamReader) -> Any:
    """A chunked body's chunks as they come."""
    while True:
        size = int((await reader.readline()).split(b";")[0], 16)
        if size == 0:
            await reader.readline()
            return
        data = await reader.readexactly(size)
        await reader.readexactly(2)
        yield data


async def open_stream(port: int, key: str) -> asyncio.StreamReader:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/stream/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Authorization: Token {key}\r\n\r\n".encode())
    status, _headers = await read_head(reader)
    if status != 200:
        raise RuntimeError(f"stream refused: {status}")
    reader._writer = writer  # type: ignore[attr-defined]  (kept alive with the reader)
    return reader


async def stream_events(reader: asyncio.StreamReader) -> Any:
    """NDJSON events of an open stream, as they come."""
    buffer = b""
    async for chunk in chunks(reader):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line:
                yield json.loads(line)


# --- the players ---------------------------------------------------------------------------
class Figures:
    def __init__(self) -> None:
        self.moves: list[float] = []  # seconds (``percentile`` prints milliseconds)
        self.wakes: list[float] = []
        self.recording = False
        self.responded: dict[tuple[int, int], float] = {}  # (game, version) -> response time
        self.delivered: dict[tuple[int, int], float] = {}  # (game, version) -> turn event time

    def responded_at(self, key: tuple[int, int], when: float) -> None:
        if key in self.delivered:
            self._wake(self.delivered.pop(key) - when)
        else:
            self.responded[key] = when

    def delivered_at(self, key: tuple[int, int], when: float) -> None:
        if key in self.responded:
            self._wake(when - self.responded.pop(key))
        else:
            self.delivered[key] = when

    def _wake(self, seconds: float) -> None:
        if self.recording:
            self.wakes.append(max(0.0, seconds))


class Pair:
    """Two players at one table after another, each on its own stream."""

    def __init__(self, port: int, keys: tuple[str, str], figures: Figures, seed: int) -> None:
        self.port, self.keys, self.figures = port, keys, figures
        self.rng = random.Random(seed)
        self.conns = [Connection(port, keys[0]), Connection(port, keys[1])]
        self.game: int | None = None

    async def new_game(self) -> None:
        status, game = await self.conns[0].request("POST", "/api/games/", {
            "seats": 2, "turn_seconds": 3600, "options": {"single_hand": True}})
        assert status == 201, game
        self.game = game["id"]
        status, _ = await self.conns[1].request("POST", f"/api/games/{self.game}/join/")
        assert status == 200
        status, _ = await self.conns[0].request("POST", f"/api/games/{self.game}/start/")
        assert status == 200

    async def run(self, stop: asyncio.Event) -> None:
        streams = [await open_stream(self.port, key) for key in self.keys]
        await self.new_game()
        tasks = [asyncio.create_task(self.play(seat, streams[seat], stop)) for seat in (0, 1)]
        await stop.wait()
        for task in tasks:
            task.cancel()
        for stream in streams:
            stream._writer.close()  # type: ignore[attr-defined]

    async def play(self, seat: int, stream: asyncio.StreamReader, stop: asyncio.Event) -> None:
        async for event in stream_events(stream):
            if stop.is_set():
                return
            if event["type"] == "ended" and seat == 0:
                await self.new_game()
            elif event["type"] == "turn" and event["game"] == self.game:
                self.figures.delivered_at((event["game"], event["version"]), time.perf_counter())
                await self.move(seat, event)

    async def move(self, seat: int, event: dict[str, Any]) -> None:
        move = choose(event["view"]["legal_moves"], self.rng)
        started = time.perf_counter()
        path = f"/api/games/{event['game']}/moves/"
        status, body = await self.conns[seat].request(
            "POST", path, {"version": event["version"], "move": move})
        done = time.perf_counter()
        if status != 201:
            return  # stale: the next turn event comes
        if self.figures.recording:
            self.figures.moves.append(done - started)
        view = body["view"]
        if body["status"] == "running" and view["awaiting"] != seat:
            self.figures.responded_at((body["game"], body["version"]), done)


async def play(port: int, keys: list[str], seconds: float) -> Figures:
    """The players' play for ``seconds`` (after a short warm-up, not counted)."""
    figures = Figures()
    stop = asyncio.Event()
    pairs = [Pair(port, (keys[i], keys[i + 1]), figures, i) for i in range(0, len(keys), 2)]
    tasks = [asyncio.create_task(pair.run(stop)) for pair in pairs]
    await asyncio.sleep(1.0)
    figures.recording = True
    await asyncio.sleep(seconds)
    figures.recording = False
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return figures


# --- the waits -----------------------------------------------------------------------------
async def hold(port: int, key: str, opened: list[int], closing: asyncio.Event) -> None:
    """One open wait: a stream read (and dropped) until told to close."""
    reader = await open_stream(port, key)
    await reader.readline()  # the first chunk's size: the stream's first read is done
    opened[0] += 1
    drain = asyncio.create_task(_drain(reader))
    await closing.wait()
    drain.cancel()
    reader._writer.close()  # type: ignore[attr-defined]


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


async def open_waits(port: int, waiters: list[str], waits: int,
                     closing: asyncio.Event) -> tuple[list[int], list[asyncio.Task[None]]]:
    """``waits`` streams, ten per waiting user, each counted once its first read is done."""
    opened: list[int] = [0]
    holders = []
    for i in range(waits):  # in batches, so the server is not flooded with connects
        key = waiters[i // WAITS_PER_USER]
        holders.append(asyncio.create_task(hold(port, key, opened, closing)))
        if i % 100 == 99:
            await asyncio.sleep(0.2)
    for _ in range(600):
        if opened[0] >= waits or any(h.done() for h in holders):
            break
        await asyncio.sleep(0.1)
    failed = [h for h in holders if h.done() and h.exception() is not None]
    if failed:
        raise RuntimeError(f"{len(failed)} waits failed: {failed[0].exception()!r}")
    await asyncio.sleep(2.0)
    return opened, holders


def merge(into: Figures, more: Figures) -> None:
    into.moves += more.moves
    into.wakes += more.wakes


async def run(port: int, players: list[str], waiters: list[str], waits: int,
              seconds: float, rounds: int) -> tuple[int, Figures, Figures]:
    """Idle and loaded play alternate ``rounds`` times (a machine's drift hits both)."""
    await play(port, players, 2.0)  # warm-up: connections, caches
    idle, loaded, still = Figures(), Figures(), waits
    for _ in range(rounds):
        merge(idle, await play(port, players, seconds / rounds))
        closing = asyncio.Event()
        opened, holders = await open_waits(port, waiters, waits, closing)
        merge(loaded, await play(port, players, seconds / rounds))
        still = min(still, opened[0] - sum(1 for h in holders if h.done()))
        closing.set()
        await asyncio.gather(*holders, return_exceptions=True)
        await asyncio.sleep(2.0)  # the server notices the closed streams
    return still, idle, loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waits", type=int, default=2000, help="streams held open (W)")
    parser.add_argument("--players", type=int, default=16, help="clients playing (even)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per load")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two loads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=16, help="request/response threads")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, 4 * args.waits + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))  # the server inherits it
    waiters = -(-args.waits // WAITS_PER_USER)
    waiters += waiters % 2
    with postgres() as database_url:
        env = server_environment(database_url)
        env["STREAM_MAX_PER_USER"] = str(WAITS_PER_USER + 2)
        player_keys, waiter_keys = prepare(env, args.players, waiters)
        with gunicorn(env, args.workers, args.threads) as port:
            print(f"gunicorn: {args.workers} arena.asgi (uvicorn) workers x {args.threads} "
                  f"threads; PostgreSQL; {args.players} players; {args.waits} waits from "
                  f"{waiters} users; {args.seconds:.0f} s idle and {args.seconds:.0f} s with "
                  f"the waits open, alternating in {args.rounds} rounds; open files {wanted}")
            try:
                import uvloop

                runner = uvloop.run
            except ImportError:
                runner = asyncio.run
            still, idle, loaded = runner(
                run(port, player_keys, waiter_keys, args.waits, args.seconds, args.rounds)
            )
    a, b = percentile(loaded.moves, 0.99), percentile(idle.moves, 0.99)
    print(f"idle: {len(idle.moves)} moves p50 {percentile(idle.moves, 0.5):.1f} ms, "
          f"wake p50 {percentile(idle.wakes, 0.5):.1f} ms p99 {percentile(idle.wakes, 0.99):.1f} "
          f"ms; loaded: {len(loaded.moves)} moves p50 {percentile(loaded.moves, 0.5):.1f} ms, "
          f"wake p50 {percentile(loaded.wakes, 0.5):.1f} ms ({len(loaded.wakes)} wakes)")
    print(f"waiting: {still} open; move p99 {a:.1f} ms vs {b:.1f} ms idle; "
          f"ratio: {a / b:.2f}; wake p99: {percentile(loaded.wakes, 0.99):.1f} ms")


if __name__ == "__main__":
    main()
