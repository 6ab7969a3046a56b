"""Benchmark: round-robin tournaments on real Celery workers, against their baselines.

Run: ``python bench/arena.py [--games-per-pairing 6] [--match-concurrency 8] [--workers 2]``.
It needs PostgreSQL and Redis: ``DATABASE_URL`` / ``CELERY_BROKER_URL`` if set (a throwaway
database is created on that server and dropped after), else a throwaway PostgreSQL 15 (as
bench/api.py starts) and a throwaway ``redis-server``. Six reference bots (random, greedy and
heuristic, twice each) run as ``python -m bots.serve`` processes on 127.0.0.1. Then:

1. raw round trips: a bare aiohttp client POSTing signed, recorded turn payloads to the six
   bots at once (``bench.roundtrip.round_trips``), at the tournament's concurrency: workers x
   games in flight per match (``TOURNAMENT_MATCH_CONCURRENCY``); half of ``--seconds`` before
   the arena http runs and half after, averaged (a shared machine's load drifts);
2. arena http: the round robin (every pair plays ``--games-per-pairing`` games, one Celery
   task per pair) on 1 worker process, then on ``--workers`` processes (prefork, concurrency 1
   each), from ``tournament_start`` to the tournament finished (finalizer included). Bot turns
   are the moves of its games (every seat is a bot);
3. arena in-process: the same tournament (same seed: same deals and seats) on 1 worker, then
   on ``--workers``, with the bots answered in the worker's process (bench/arena_inprocess.py:
   no HTTP, the arena's own cost);
4. bare engine: the same games, the same strategies, the engine alone with no database, on as
   many processes as there are workers; 1.5 s before the arena in-process runs and 1.5 s
   after, averaged.

``--bot-delay-ms MS``: the bots answer each turn MS late (``bots.serve --delay-ms``), as bots
across a network do; the raw round trips then pay it too.

Two ratios: R1 = bot turns/s (arena http, all workers) / raw round trips/s; R2 = games/s
(arena in-process, all workers) / bare-engine games/s. A tournament's time runs from
``tournament_start`` to the finalizer's ``finalized_at``. Two scaling lines (games/s on 1
worker process, then on ``--workers``, with the growth in bot turns/s beside it): the HTTP
tournament's (the product's; its six bot servers share this machine's cores with the workers
and the database) and the in-process one's (the arena's own cost). The last line is exactly
``arena http: X games/s, ratio R1; arena in-process: Y games/s, ratio R2``.

Under each run, where its CPU went (bench/cpu.py, from /proc): milliseconds per bot turn (per
round trip for the raw runs) of the bot servers, the workers, PostgreSQL and this process, and
how busy the machine was. R1 compares two runs that share the same cores: when the machine is
busy through both, R1 is about the bots' share of the CPU a turn costs in all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before anything: this file's folder holds bench/arena.py

from bench.api import free_port, postgres  # noqa: E402
from bench.cpu import Sampler  # noqa: E402

STRATEGY_NAMES = ("random", "greedy", "heuristic")


# --- infrastructure ---------------------------------------------------------------------------
@contextlib.contextmanager
def redis() -> Iterator[str]:
    """The broker URL to use: the environment's, or a throwaway redis-server's."""
    url = os.environ.get("CELERY_BROKER_URL", "")
    if url.startswith("redis"):
        yield url
        return
    port = free_port()
    process = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1", "--port",
         str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                import socket

                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new database on ``server_url``'s server, dropped afterwards."""
    import psycopg

    name = f"arena_bench_{uuid.uuid4().hex[:8]}"
    base = server_url.rsplit("/", 1)[0]
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def environment(database_url: str, broker_url: str, match_concurrency: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url, CELERY_BROKER_URL=broker_url,
        CACHE_URL=broker_url.rsplit("/", 1)[0] + "/1",
        DJANGO_SETTINGS_MODULE="arena.settings", PYTHONPATH=str(ROOT), DEBUG="false",
        LOG_LEVEL="WARNING", BOTS_ALLOW_PRIVATE="true", BOTS_RUNNER="off",
        TOURNAMENT_MATCH_CONCURRENCY=str(match_concurrency),
    )
    return env


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def worker_queues() -> str:
    """Every queue the settings route tasks to (a bench worker serves them all)."""
    from django.conf import settings

    queues = {settings.CELERY_TASK_DEFAULT_QUEUE}
    for route in (getattr(settings, "CELERY_TASK_ROUTES", None) or {}).values():
        if isinstance(route, dict) and route.get("queue"):
            queues.add(route["queue"])
    return ",".join(sorted(queues))


@contextlib.contextmanager
def workers(env: dict[str, str], count: int, app: str = "arena",
            extra: dict[str, str] | None = None) -> Iterator[None]:
    """``count`` celery worker processes (prefork, concurrency 1), ready when yielded."""
    from arena.celery import app as celery_app

    names = [f"bench{i}-{uuid.uuid4().hex[:6]}@localhost" for i in range(count)]
    logs = [tempfile.TemporaryFile("w+") for _ in names]  # noqa: SIM115 (closed below)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "celery", "--quiet", "-A", app, "worker", "--pool=prefork",
             "--concurrency=1", "--loglevel=WARNING", f"--hostname={name}", "-Q", worker_queues(),
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            env={**env, **(extra or {})}, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        for name, log in zip(names, logs, strict=True)
    ]
    try:
        deadline = time.monotonic() + 60
        waiting = set(names)
        while waiting and time.monotonic() < deadline:
            for answer in celery_app.control.ping(destination=list(waiting), timeout=0.5):
                waiting -= set(answer)
        if waiting:
            raise RuntimeError(f"workers did not start: {sorted(waiting)}")
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in logs:  # what went wrong, if anything did (not the root-user warning)
            log.seek(0)
            lines = [line for line in log.read().splitlines()
                     if ("ERROR" in line or "Traceback" in line or "CRITICAL" in line)]
            if lines:
                print("worker log:", *lines[:20], sep="\n  ", file=sys.stderr)
            log.close()


@contextlib.contextmanager
def bot_servers(delay_ms: float = 0.0) -> Iterator[list[tuple[str, str, str]]]:
    """Six ``bots.serve`` processes (each turn answered ``delay_ms`` late): (strategy, url,
    secret) each."""
    from bench.roundtrip import bot_process
    from bots import signing

    with contextlib.ExitStack() as stack:
        servers = []
        for strategy in STRATEGY_NAMES * 2:
            secret = signing.new_secret()
            url = stack.enter_context(bot_process(secret, strategy, delay_ms))
            servers.append((strategy, url, secret))
        yield servers


def register(servers: Sequence[tuple[str, str, str]]) -> tuple[Any, list[Any]]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from bots import services as bot_services

    owner = get_user_model().objects.create_superuser("bench", password=None)
    bots = []
    for i, (strategy, url, secret) in enumerate(servers):
        bot, _ = bot_services.bot_create(owner=owner, name=f"{strategy}-{i}", url=url)
        bot.secret, bot.verified, bot.verified_at = secret, True, timezone.now()
        bot.save(update_fields=["secret", "verified", "verified_at"])
        bots.append(bot)
    return owner, bots


# --- measurements -----------------------------------------------------------------------------
def raw_round_trips(servers: Sequence[tuple[str, str, str]], concurrency: int,
                    seconds: float) -> float:
    """Round trips/s of a bare aiohttp client to all the bots at once, ``concurrency`` calls
    in flight in all (spread over the bots as evenly as it divides)."""
    from bench.roundtrip import recorded_turns, round_trips

    payloads = recorded_turns()
    shares = [concurrency // len(servers) + (i < concurrency % len(servers))
              for i in range(len(servers))]

    async def run(duration: float) -> float:
        rates = await asyncio.gather(*(
            round_trips(url, payloads, secret=secret, concurrency=share, seconds=duration)
            for (_, url, secret), share in zip(servers, shares, strict=True) if share))
        return sum(rates)

    asyncio.run(run(0.3))  # warm the bots
    with Sampler() as cpu:
        rate = asyncio.run(run(seconds))
    print(f"  raw round trips, {cpu.usage.per(round(rate * seconds), 'round trip')}", flush=True)
    return rate


def tournament(owner: Any, bots: Sequence[Any], *, options: dict[str, Any], games: int,
               seed: int, label: str, timeout: float) -> dict[str, float]:
    """Create, enter, start a tournament; wait until it is finished. Its figures."""
    from django.db.models import Sum
    from django.utils import timezone

    from arena import services
    from arena.models import Tournament, TournamentGame, TournamentStatus

    created = services.tournament_create(
        owner=owner, name=f"bench {label} {uuid.uuid4().hex[:6]}", options=options,
        table_size=2, games_per_pairing=games, seed=seed)
    for bot in bots:
        services.entrant_enter(tournament_id=created.pk, bot_id=bot.pk, user=owner)
    started, started_at = time.perf_counter(), timezone.now()
    status, finalized_at = "", None
    with Sampler() as cpu:
        services.tournament_start(tournament_id=created.pk, user=owner)
        while time.perf_counter() - started < timeout:
            status, finalized_at = Tournament.objects.filter(pk=created.pk).values_list(
                "status", "finalized_at")[0]
            if status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
                break
            time.sleep(0.05)
    if status != TournamentStatus.FINISHED or finalized_at is None:
        raise RuntimeError(f"{label}: the tournament is {status!r} after "
                           f"{time.perf_counter() - started:.0f} s")
    # From the start to the finalizer's own timestamp (same machine, same clock), not to the
    # poll that saw it: a poll every 50 ms would add up to 50 ms to a 2-second run.
    elapsed = (finalized_at - started_at).total_seconds()
    played = TournamentGame.objects.filter(tournament_id=created.pk)
    count = played.count()
    turns = played.aggregate(n=Sum("game__move_count"))["n"] or 0
    figures = {"games": count, "turns": turns, "seconds": elapsed,
               "games_s": count / elapsed, "turns_s": turns / elapsed}
    print(f"{label}: {count} games, {turns} bot turns ({turns / max(count, 1):.1f} a game) "
          f"in {elapsed:.1f} s: "
          f"{figures['games_s']:.1f} games/s, {figures['turns_s']:.0f} bot turns/s", flush=True)
    print(f"  {label}, {cpu.usage.per(turns, 'bot turn')}", flush=True)
    return figures


def sweep(env: dict[str, str], servers: Sequence[tuple[str, str, str]], owner: Any,
          bots: Sequence[Any], count: int, level: int, seconds: float,
          common: dict[str, Any]) -> None:
    """R1 at one match concurrency: raw round trips at the same number of calls in flight."""
    before = raw_round_trips(servers, count * level, seconds / 2)
    with workers(env, count, extra={"TOURNAMENT_MATCH_CONCURRENCY": str(level)}):
        arena = tournament(owner, bots, label=f"sweep, match concurrency {level}", **common)
    raw = (before + raw_round_trips(servers, count * level, seconds / 2)) / 2
    print(f"sweep: match concurrency {level} on {count} workers: raw {raw:.0f} round trips/s, "
          f"arena {arena['turns_s']:.0f} bot turns/s, {arena['games_s']:.2f} games/s, "
          f"ratio {arena['turns_s'] / raw:.2f}", flush=True)


def _turns_growth(runs: dict[int, dict[str, float]], workers: int) -> str:
    """The same growth in bot turns/s: the bots' own randomness makes the runs' games longer
    or shorter (40 to 58 turns a game seen), which games/s counts and turns/s does not."""
    return (f"in bot turns/s: {runs[1]['turns_s']:.0f} to {runs[workers]['turns_s']:.0f}, "
            f"{runs[workers]['turns_s'] / runs[1]['turns_s']:.2f}x")


# --- the bare engine --------------------------------------------------------------------------
def _bare_games(job: tuple[list[tuple[tuple[str, ...], int]], dict[str, Any], float]
                ) -> tuple[int, int]:
    """Play ``games`` (seat strategies, seed) with the engine alone, over and over until
    ``seconds`` have passed (at least once); how many games and moves."""
    from bots.strategies import STRATEGIES
    from games.uno import Move, Options, apply, new_game, view

    games, options_json, seconds = job
    played = moves = 0
    deadline = time.perf_counter() + seconds
    while played == 0 or time.perf_counter() < deadline:
        for players, seed in games:
            options = Options.from_json({**options_json, "players": len(players)})
            state = new_game(options, seed)
            rng = random.Random(seed)
            while (seat := state.awaiting) is not None:
                move = STRATEGIES[players[seat]](view(state, seat), rng)
                apply(state, seat, Move.from_json(move))
                moves += 1
            played += 1
    return played, moves


def bare_engine(names: Sequence[str], *, options: dict[str, Any], games: int, seed: int,
                processes: int, seconds: float = 3.0) -> float:
    """Games/s of the tournament's games (same schedule, seeds and strategies) played by the
    engine alone on ``processes`` processes, each replaying its share for ``seconds``."""
    from arena.schedule import round_robin

    entrants = list(range(len(names)))
    schedule = [(tuple(names[p] for p in g.players), g.seed)
                for g in round_robin(entrants, seed=seed, table_size=2, games_per_pairing=games)]
    jobs = [(schedule[i::processes], options, seconds) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        pool.map(_bare_games, [(schedule[:2], options, 0.0)] * processes)  # import, warm
        started = time.perf_counter()
        counts = pool.map(_bare_games, jobs)
        elapsed = time.perf_counter() - started
    played, moves = (sum(c[i] for c in counts) for i in (0, 1))
    rate = played / elapsed
    print(f"bare engine, {processes} process{'es' if processes > 1 else ''}: "
          f"{played} games ({moves / played:.1f} moves a game) in {elapsed:.2f} s: "
          f"{rate:.1f} games/s", flush=True)
    return rate


# --- main ---------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games-per-pairing", type=int, default=6)
    parser.add_argument("--match-concurrency", type=int, default=8,
                        help="games in flight per match (TOURNAMENT_MATCH_CONCURRENCY; its "
                        "default, 8)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5.0, help="raw round-trip run")
    parser.add_argument("--full-games", action="store_true",
                        help="matches to 500 points instead of single hands")
    parser.add_argument("--sweep", type=int, nargs="*", metavar="N",
                        help="first, for each N: raw round trips and arena http on --workers "
                        "with TOURNAMENT_MATCH_CONCURRENCY=N")
    parser.add_argument("--sweep-only", action="store_true", help="stop after --sweep")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--bot-delay-ms", type=float, default=0.0, metavar="MS",
                        help="the bots answer each turn MS late (bots across a network)")
    args = parser.parse_args()

    from games.uno import Options

    options = Options(players=2, single_hand=not args.full_games).to_json()
    print(f"machine: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(postgres())
        database = (stack.enter_context(fresh_database(server))
                    if os.environ.get("DATABASE_URL") else server)
        broker = stack.enter_context(redis())
        env = environment(database, broker, args.match_concurrency)
        setup_django(env)
        servers = stack.enter_context(bot_servers(args.bot_delay_ms))
        owner, bots = register(servers)
        common = {"options": options, "games": args.games_per_pairing, "seed": args.seed,
                  "timeout": args.timeout}
        for level in args.sweep or ():
            sweep(env, servers, owner, bots, args.workers, level, args.seconds, common)
        if args.sweep_only:
            return
        concurrency = args.workers * args.match_concurrency
        before = raw_round_trips(servers, concurrency, args.seconds / 2)
        http: dict[int, dict[str, float]] = {}
        for count in sorted({1, args.workers}):
            with workers(env, count):
                http[count] = tournament(owner, bots, label=f"arena http, {count} worker(s)",
                                         **common)
        after = raw_round_trips(servers, concurrency, args.seconds / 2)
        raw = (before + after) / 2
        print(f"raw round trips: {raw:.0f}/s at concurrency {concurrency} (bare aiohttp, six "
              f"bots; {before:.0f}/s before the arena http runs, {after:.0f}/s after)",
              flush=True)
        growth = http[args.workers]["games_s"] / http[1]["games_s"]
        names = [strategy for strategy, _, _ in servers]
        bare_args = {"options": options, "games": args.games_per_pairing, "seed": args.seed,
                     "processes": args.workers, "seconds": 1.5}
        bare_before = bare_engine(names, **bare_args)
        in_process_bots = json.dumps({url: strategy for strategy, url, _ in servers})
        local: dict[int, dict[str, float]] = {}
        for count in sorted({1, args.workers}):
            with workers(env, count, app="bench.arena_inprocess",
                         extra={"BENCH_INPROCESS_BOTS": in_process_bots}):
                local[count] = tournament(
                    owner, bots, label=f"arena in-process, {count} worker(s)", **common)
        local_growth = local[args.workers]["games_s"] / local[1]["games_s"]
        print(f"scaling, arena http (six HTTP bot servers on this machine's "
              f"{os.cpu_count()} cores): {http[1]['games_s']:.1f} games/s on 1 worker, "
              f"{http[args.workers]['games_s']:.1f} on {args.workers}: {growth:.2f}x "
              f"({_turns_growth(http, args.workers)})", flush=True)
        print(f"scaling, arena in-process (the arena's own cost): {local[1]['games_s']:.1f} "
              f"games/s on 1 worker, {local[args.workers]['games_s']:.1f} on {args.workers}: "
              f"{local_growth:.2f}x ({_turns_growth(local, args.workers)})", flush=True)
        bare = (bare_before + bare_engine(names, **bare_args)) / 2
        print(f"bare engine: {bare:.1f} games/s (before and after the arena in-process runs, "
              f"averaged)", flush=True)
        from django.db import connections

        connections.close_all()
    r1 = http[args.workers]["turns_s"] / raw
    r2 = local[args.workers]["games_s"] / bare
    print(f"arena http: {http[args.workers]['games_s']:.3g} games/s, ratio {r1:.3g}; "
          f"arena in-process: {local[args.workers]['games_s']:.3g} games/s, ratio {r2:.3g}")


if __name__ == "__main__":
    main()
