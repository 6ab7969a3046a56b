"""Benchmark: the bot-turn rate of the server's runner against raw round trips to the same bot.

Run: ``python bench/bots.py [--concurrency 4] [--seconds 10] [--profile]``. It starts two
reference bots (``python -m bots.serve --strategy greedy``, each its own process on
127.0.0.1), then measures, at the same concurrency:

* raw round trips: a bare aiohttp client (keep-alive pool) POSTing signed, recorded turn
  payloads to one of the bots as fast as the bot answers (``bench.roundtrip.round_trips``);
* bot turns: ``concurrency`` threads, each playing whole games (to 500 points) between the two
  bots with ``bots.runner.play_game`` (engine, the seat's view, payload, signing, the HTTP
  call, the move through ``games.services.move_play``, the call log and aggregates, start and
  end notices included). A turn is one answered decision (a call-log row of kind ``turn``).

The database: ``DATABASE_URL`` if set (a throwaway test database is created on that server
and dropped after), else a throwaway SQLite file. ``--profile`` also runs one game thread
under cProfile and prints where a turn's time goes.

The last line is exactly ``bot turns: X/s; raw round trips: Y/s; ratio: Z`` (Z = X / Y).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
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
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{sqlite_dir}/bench.sqlite3"
    import django

    django.setup()


def _play(owner: Any, bots: list[Any], stop_at: float, transport: Any, games: list[int]) -> None:
    from django.db import connections

    from bots import runner
    from tests.bots.helpers import bot_table

    try:
        while time.perf_counter() < stop_at:
            game = bot_table(owner, bots, options={})  # a full game: hands up to 500 points
            runner.play_game(game.pk, transport=transport)
            games.append(game.pk)
    finally:
        connections.close_all()


def bot_turns(owner: Any, bots: list[Any], *, concurrency: int, seconds: float) -> float:
    from django.db.models import Sum

    from bots.models import BotCounter
    from bots.transport import BotTransport
    from games.models import MoveRecord, MoveSource

    transport = BotTransport(allow_private=True)
    try:
        _play(owner, bots, time.perf_counter() + 0.5, transport, [])  # warm the pools
        games: list[int] = []
        started = time.perf_counter()
        threads = [
            threading.Thread(target=_play, args=(owner, bots, started + seconds, transport, games))
            for _ in range(concurrency)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        # Every bot answer the server applied is a move record of the player's (the call log
        # itself is pruned as it grows).
        turns = MoveRecord.objects.filter(game_id__in=games, source=MoveSource.PLAYER).count()
        failed = BotCounter.objects.filter(name="failed").aggregate(n=Sum("count"))["n"] or 0
    finally:
        transport.close()
    print(f"runner: {len(games)} games, {turns} turns in {elapsed:.1f} s"
          f"{f' ({failed} failed turns)' if failed else ''}", flush=True)
    return turns / elapsed


def profile(owner: Any, bots: list[Any], seconds: float) -> None:
    from bots.transport import BotTransport

    transport = BotTransport(allow_private=True)
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        _play(owner, bots, time.perf_counter() + seconds, transport, [])
        profiler.disable()
    finally:
        transport.close()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(r"(bots|games)/", 25)
    stats.sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, default=4,
                        help="game threads, and the raw client's concurrency (default: "
                        "BOTS_THREADS' default, 4)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        _django(tmp)
        from django.db import connection

        from bench.roundtrip import bot_process, recorded_turns, round_trips
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
                payloads = recorded_turns()
                asyncio.run(round_trips(url0, payloads, secret=secrets[0],
                                        concurrency=args.concurrency, seconds=0.5))
                raw = asyncio.run(round_trips(url0, payloads, secret=secrets[0],
                                              concurrency=args.concurrency,
                                              seconds=args.seconds))
                print(f"raw: {raw:.0f} round trips/s at concurrency {args.concurrency}",
                      flush=True)
                turns = bot_turns(owner, bots, concurrency=args.concurrency,
                                  seconds=args.seconds)
                if args.profile:
                    profile(owner, bots, min(args.seconds, 5.0))
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
    print(f"bot turns: {turns:.0f}/s; raw round trips: {raw:.0f}/s; ratio: {turns / raw:.2f}")


if __name__ == "__main__":
    main()
