"""Benchmark: signed bot round trips/s through ``BotTransport`` vs a bare aiohttp client.

Run: ``python bench/roundtrip.py [--seconds 3] [--concurrency 1 16] [--rounds 3]``. It starts
``python -m bots.serve`` (greedy) as a separate process on 127.0.0.1, records turn payloads from
real engine positions, then for each concurrency alternates both clients against that server
(``rounds`` runs each, medians reported):

* transport: ``BotTransport.post`` (guard, signing, one deadline, capped read, JSON parse);
* bare: one ``aiohttp.ClientSession`` with a keep-alive pool, the same signed POST, ``json()``.

Both sign every call (the bot verifies every signature), so the difference is the transport's
own cost. ``round_trips`` is importable for other benchmarks (bench/bots.py):

    from bench.roundtrip import round_trips
    per_second = asyncio.run(round_trips(url, payloads, secret=s, concurrency=16, seconds=3))

The last line is exactly ``transport 1: A/s 16: B/s; bare 1: C/s 16: D/s``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bots import signing  # noqa: E402
from bots.transport import BotTransport  # noqa: E402


def recorded_turns(count: int = 200, seed: int = 1) -> list[dict[str, Any]]:
    """Turn payloads from positions of random games, as the runner would send them."""
    from games.uno import Options, apply, legal_moves, new_game, view

    rng = random.Random(seed)
    payloads: list[dict[str, Any]] = []
    game = 0
    while len(payloads) < count:
        game += 1
        state = new_game(Options(players=2), seed=rng.randrange(1 << 30))
        for version in range(60):
            seat = state.awaiting
            if seat is None:
                break
            moves = legal_moves(state, seat)
            payloads.append(
                {
                    "protocol": 1,
                    "type": "turn",
                    "game": game,
                    "version": version,
                    "seat": seat,
                    "options": {"players": 2},
                    "view": view(state, seat),
                    "legal_moves": [m.to_json() for m in moves],
                    "budget_ms": 1000,
                    "latency": {"p50_ms": None, "p99_ms": None},
                }
            )
            apply(state, seat, rng.choice(moves))
    return payloads[:count]


async def _bare_post(
    session: aiohttp.ClientSession, url: str, payload: dict[str, Any], secret: str
) -> bool:
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = {
        "Content-Type": "application/json",
        **signing.headers_for([secret], f"msg_{uuid.uuid4().hex}", int(time.time()), body),
    }
    async with session.post(url, data=body, headers=headers) as response:
        await response.json()
        return response.status == 200


async def round_trips(
    url: str,
    payloads: Sequence[dict[str, Any]],
    *,
    secret: str,
    concurrency: int,
    seconds: float,
    transport: BotTransport | None = None,
) -> float:
    """Signed POSTs of ``payloads`` (cycled) from ``concurrency`` workers for ``seconds``:
    answered calls per second. With ``transport`` the calls go through it; without, through a
    bare aiohttp session (the baseline)."""
    session = None
    if transport is None:
        connector = aiohttp.TCPConnector(limit_per_host=max(concurrency, 1))
        session = aiohttp.ClientSession(connector=connector)
    done = 0
    failed = 0
    stop_at = time.perf_counter() + seconds

    async def worker(offset: int) -> None:
        nonlocal done, failed
        index = offset
        while time.perf_counter() < stop_at:
            payload = payloads[index % len(payloads)]
            index += concurrency
            if transport is not None:
                result = await transport.post(url, payload, secrets=[secret], timeout=5)
                ok = result.ok
            else:
                assert session is not None
                ok = await _bare_post(session, url, payload, secret)
            if ok:
                done += 1
            else:
                failed += 1

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
    finally:
        if session is not None:
            await session.close()
    elapsed = time.perf_counter() - started
    if failed:
        print(f"  ({failed} calls failed)", file=sys.stderr)
    return done / elapsed


@contextlib.contextmanager
def bot_process(secret: str, strategy: str = "greedy", delay_ms: float = 0.0) -> Iterator[str]:
    """``python -m bots.serve`` on a free port of 127.0.0.1 (each turn answered ``delay_ms``
    late); yields its URL."""
    env = {**os.environ, "BOT_SECRET": secret, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "bots.serve", "--strategy", strategy, "--port", "0",
         "--delay-ms", str(delay_ms)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("Serving"):
            raise RuntimeError(f"bots.serve did not start: {line!r}")
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(10)


async def _compare(
    url: str, secret: str, seconds: float, levels: list[int], rounds: int
) -> dict[str, dict[int, float]]:
    """Median of ``rounds`` alternating runs per client and level (a busy machine's noise
    falls on both clients alike)."""
    payloads = recorded_turns()
    transport = BotTransport(allow_private=True)
    samples: dict[str, dict[int, list[float]]] = {"transport": {}, "bare": {}}
    try:
        # Warm both pools first so neither pays for connecting in its figure.
        await round_trips(url, payloads, secret=secret, concurrency=2, seconds=0.3)
        await round_trips(
            url, payloads, secret=secret, concurrency=2, seconds=0.3, transport=transport
        )
        for level in levels:
            for _ in range(rounds):
                for name in ("transport", "bare"):
                    rate = await round_trips(
                        url,
                        payloads,
                        secret=secret,
                        concurrency=level,
                        seconds=seconds,
                        transport=transport if name == "transport" else None,
                    )
                    samples[name].setdefault(level, []).append(rate)
                    print(f"{name:9} concurrency {level:3}: {rate:8.0f} round trips/s", flush=True)
    finally:
        await transport.aclose()
    return {
        name: {level: statistics.median(rates) for level, rates in by_level.items()}
        for name, by_level in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs; medians shown")
    parser.add_argument("--url", help="an already running bots.serve (with --secret)")
    parser.add_argument("--secret", help="its secret")
    args = parser.parse_args()
    if args.url:
        figures = asyncio.run(
            _compare(args.url, args.secret, args.seconds, args.concurrency, args.rounds)
        )
    else:
        secret = signing.new_secret()
        with bot_process(secret) as url:
            figures = asyncio.run(
                _compare(url, secret, args.seconds, args.concurrency, args.rounds)
            )
    parts = [
        f"{name} " + " ".join(f"{level}: {rate:.0f}/s" for level, rate in figures[name].items())
        for name in ("transport", "bare")
    ]
    print("; ".join(parts))


if __name__ == "__main__":
    main()
