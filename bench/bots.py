"""Benchmark: the bot-turn rate of the server's runner against raw round trips to the same bot.

Run: ``python bench/bots.py [--concurrency 8] [--seconds 5] [--rounds 3] [--profile]``. It
starts two reference bots (``python -m bots.serve --strategy greedy``, each its own process on
127.0.0.1), then measures, at the same concurrency, in ``rounds`` alternating windows of
``seconds`` each (medians reported, so a busy machine's noise falls on both alike):

* raw round trips: a bare aiohttp client (keep-alive pool) POSTing signed, recorded turn
  payloads to one of the bots as fast as the bot answers (``bench.roundtrip.round_trips``);
* for comparison only, the same raw round trips with the concurrency split over both bots
  (the runner's games talk to both, and one bot server may be what limits the raw rate):
  printed on the line before the last, not in it;
* bot turns: one ``bots.driver.Driver`` (one event loop) keeping ``concurrency`` games
  (to 500 points) between the two bots in flight, a new game submitted as one ends: engine,
  the seat's view, payload, JSON, signing, the HTTP call, applying the move in memory
  (``games.memory``, the services' own rules), recording each game whole in one transaction,
  the call log and aggregates, start and end notices (the end one with the replay) included;
  creating and starting the games too. At the window's end the driver stops and records the
  games in flight as they stand, within the window's time. A turn is one answered decision
  the server applied (a player's move record, counted in the database).

Concurrency is counted the same on both sides: calls in flight at once (the raw client's
workers; the driver's games, each with at most one call out). The default, 8, is what a
tournament's runner keeps in flight (``TOURNAMENT_MATCH_CONCURRENCY``). Each runner line also
gives the CPU a turn of the driver's loop thread and of the recording thread, apart.

The database: ``DATABASE_URL`` if set (a throwaway test database is created on that server
and dropped after), else a throwaway SQLite file. ``--profile`` also runs one window under
cProfile (the driver's loop thread and the recording thread apart) and prints where a turn's
time goes.

The last line is exactly ``bot turns: X/s; raw round trips: Y/s; ratio: Z`` (Z = X / Y).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _django(sqlite_dir: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    os.environ["BOTS_RUNNER"] = "off"  # the benchmark's threads drive the games
    os.environ["BOTS_ALLOW_PRIVATE"] = "true"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DEBUG", "false")  # as the other benches: no query log
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{sqlite_dir}/bench.sqlite3"
    import django

    django.setup()


def _new_game(owner: Any, bots: list[Any]) -> int:
    """A running game between the bots, made as a tournament makes its games (seated and
    dealt from a seed in one transaction, then started): a full game, hands up to 500
    points."""
    import secrets

    from games import services as game_services

    game = game_services.game_create_seated(user=owner, options={}, seed=secrets.randbits(63),
                                            bots=[bot.pk for bot in bots])
    return game_services.game_start(game_id=game.pk, user=owner).pk


def bot_turns(owner: Any, bots: list[Any], transport: Any, *, concurrency: int,
              seconds: float, profilers: tuple[Any, Any] | None = None) -> float:
    """Bot turns per second of one driver keeping ``concurrency`` games in flight for
    ``seconds`` (then stopped: the games in flight are recorded as they stand, and that time
    counts). ``profilers``: (loop thread's, recording thread's) cProfile profilers."""
    from bots.driver import Driver
    from games.models import MoveRecord, MoveSource

    games: list[int] = []
    driver = Driver(transport=transport)
    if profilers is not None:
        driver.call_in_loop(profilers[0].enable)
        profilers[1].enable()
    loop_cpu, recording_cpu = driver.call_in_loop(time.thread_time), time.thread_time()
    started = time.perf_counter()
    stop_at = started + seconds
    timer = threading.Timer(seconds, driver.stop)
    timer.start()
    try:
        for _ in range(concurrency):
            games.append(_new_game(owner, bots))
            driver.submit(games[-1])
        for _outcome in driver.results():
            if time.perf_counter() < stop_at:
                games.append(_new_game(owner, bots))
                driver.submit(games[-1])
        elapsed = time.perf_counter() - started
        loop_cpu = driver.call_in_loop(time.thread_time) - loop_cpu
        recording_cpu = time.thread_time() - recording_cpu
    finally:
        timer.cancel()
        if profilers is not None:
            profilers[1].disable()
            driver.call_in_loop(profilers[0].disable)
        driver.close()
    # Every bot answer the server applied is a move record of the player's (the call log
    # itself is pruned as it grows).
    turns = MoveRecord.objects.filter(game_id__in=games, source=MoveSource.PLAYER).count()
    print(f"runner: {len(games)} games, {turns} turns in {elapsed:.1f} s: "
          f"{turns / elapsed:.0f} turns/s; CPU a turn: driver's loop thread "
          f"{loop_cpu / turns * 1e6:.0f} us, recording thread {recording_cpu / turns * 1e6:.0f} us",
          flush=True)
    return turns / elapsed


async def _raw_both(targets: list[tuple[str, str]], payloads: list[dict[str, Any]], *,
                    concurrency: int, seconds: float) -> float:
    """Raw round trips with the concurrency split over both bots (the runner's games talk to
    both): not the issue's baseline, printed beside it."""
    from bench.roundtrip import round_trips

    shares = [concurrency - concurrency // 2, concurrency // 2]
    rates = await asyncio.gather(*(
        round_trips(url, payloads, secret=secret, concurrency=share, seconds=seconds)
        for (url, secret), share in zip(targets, shares, strict=True) if share
    ))
    return sum(rates)


def measure(owner: Any, bots: list[Any], targets: list[tuple[str, str]], *, concurrency: int,
            seconds: float, rounds: int) -> tuple[float, float, float]:
    """Medians of ``rounds`` alternating windows of raw round trips (to the first bot, as
    the issue defines them; and, for comparison, spread over both bots) and runner turns,
    so a busy machine's noise falls on all alike."""
    from django.db.models import Sum

    from bench.roundtrip import recorded_turns, round_trips
    from bots.models import BotCounter
    from bots.transport import BotTransport

    payloads = recorded_turns()
    transport = BotTransport(allow_private=True)
    (url, secret) = targets[0]
    raws: list[float] = []
    boths: list[float] = []
    turns: list[float] = []
    try:
        asyncio.run(round_trips(url, payloads, secret=secret, concurrency=concurrency,
                                seconds=0.5))
        bot_turns(owner, bots, transport, concurrency=concurrency, seconds=0.5)  # warm pools
        for _ in range(rounds):
            cpu = time.process_time()
            raw = asyncio.run(round_trips(url, payloads, secret=secret,
                                          concurrency=concurrency, seconds=seconds))
            raw_cpu = (time.process_time() - cpu) * 1000 / (raw * seconds)
            print(f"raw: {raw:.0f} round trips/s at concurrency {concurrency}; "
                  f"client CPU {raw_cpu:.2f} ms a call", flush=True)
            raws.append(raw)
            boths.append(asyncio.run(_raw_both(targets, payloads, concurrency=concurrency,
                                               seconds=seconds)))
            print(f"  (raw spread over both bots: {boths[-1]:.0f} round trips/s)", flush=True)
            cpu = time.process_time()
            turns.append(bot_turns(owner, bots, transport, concurrency=concurrency,
                                   seconds=seconds))
            print(f"  runner CPU {(time.process_time() - cpu) * 1000 / (turns[-1] * seconds):.2f}"
                  " ms a turn (this process, all threads)", flush=True)
        failed = BotCounter.objects.filter(name="failed").aggregate(n=Sum("count"))["n"] or 0
        if failed:
            print(f"({failed} failed turns)", flush=True)
    finally:
        transport.close()
    return statistics.median(turns), statistics.median(raws), statistics.median(boths)


def profile(owner: Any, bots: list[Any], seconds: float, concurrency: int) -> None:
    from bots.transport import BotTransport

    transport = BotTransport(allow_private=True)
    loop_profiler, record_profiler = cProfile.Profile(), cProfile.Profile()
    try:
        bot_turns(owner, bots, transport, concurrency=concurrency, seconds=seconds,
                  profilers=(loop_profiler, record_profiler))
    finally:
        transport.close()
    for name, profiler in (("the driver's loop thread", loop_profiler),
                           ("the recording (caller's) thread", record_profiler)):
        print(f"--- {name} ---")
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(r"(bots|games)/", 25)
        stats.sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, default=8,
                        help="games in flight on the driver, and the raw client's "
                        "concurrency (default 8: what a tournament's runner keeps in flight, "
                        "TOURNAMENT_MATCH_CONCURRENCY's default)")
    parser.add_argument("--seconds", type=float, default=5.0, help="per window")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating raw and runner windows; medians shown")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        _django(tmp)
        from django.db import connection

        from bench.roundtrip import bot_process
        from bots import services as bot_services
        from bots import signing

        old_name = connection.creation.create_test_db(verbosity=0, keepdb=False)
        try:
            from django.contrib.auth import get_user_model

            owner = get_user_model().objects.create_user("bench", password=None)
            secrets = [signing.new_secret(), signing.new_secret()]
            with bot_process(secrets[0]) as url0, bot_process(secrets[1]) as url1:
                bots = []
                for i, (url, secret) in enumerate(((url0, secrets[0]), (url1, secrets[1]))):
                    bot, _ = bot_services.bot_create(owner=owner, name=f"bench{i}", url=url)
                    bot.secret = secret
                    bot.save(update_fields=["secret"])
                    bots.append(bot)
                turns, raw, both = measure(owner, bots, [(url0, secrets[0]), (url1, secrets[1])],
                                           concurrency=args.concurrency, seconds=args.seconds,
                                           rounds=args.rounds)
                if args.profile:
                    profile(owner, bots, min(args.seconds, 5.0), args.concurrency)
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
    print(f"(against raw round trips spread over both bots, {both:.0f}/s: "
          f"ratio {turns / both:.2f})")
    print(f"bot turns: {turns:.0f}/s; raw round trips: {raw:.0f}/s; ratio: {turns / raw:.2f}")


if __name__ == "__main__":
    main()
