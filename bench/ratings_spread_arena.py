"""The spread of tournament ratings with the real runner, with and without duplicate deals.

    python bench/ratings_spread_arena.py [--runs 8] [--games 20] [--field reference|twins]

The same round robin (the reference strategies random, greedy and heuristic; or, ``twins``,
heuristic twice and greedy) is run ``--runs`` times per mode, each time with its own seed,
through the arena itself: ``arena.services`` creates, starts and plays it
(``tournament_run_foreground``: real games with their move logs, ``bots.runner`` driving the
seats), the finalizer fits Bradley-Terry. The bots answer in-process
(bench/arena_inprocess.py), which changes nothing in the games but their speed. Printed: each
bot's mean rating, its standard deviation across the runs, the mean width of its 95% interval,
and the gaps' spreads. The database: ``DATABASE_URL`` if set (a throwaway database on that
server), else a throwaway PostgreSQL 15.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api import postgres  # noqa: E402
from bench.arena import environment, fresh_database, register, setup_django  # noqa: E402

FIELDS = {"reference": ("random", "greedy", "heuristic"),
          "twins": ("heuristic", "heuristic", "greedy")}


def _mean(values: list[float]) -> float:
    """The mean interval width, nan if no tournament gave an interval."""
    return statistics.mean(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--games", type=int, default=20, help="games per pairing (even)")
    parser.add_argument("--field", choices=sorted(FIELDS), default="reference")
    parser.add_argument("--full-games", action="store_true", help="matches to 500")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(postgres())
        database = (stack.enter_context(fresh_database(server))
                    if os.environ.get("DATABASE_URL") else server)
        env = environment(database, "redis://unused:1/0", 4)
        env.pop("CELERY_BROKER_URL")  # no broker: the foreground run needs none
        os.environ.pop("CELERY_BROKER_URL", None)
        setup_django(env)
        from arena import services
        from arena.models import Tournament
        from bench.arena_inprocess import install
        from bots import signing
        from games.uno import Options

        names = FIELDS[args.field]
        servers = [(s, f"http://127.0.0.1:{9100 + i}/{s}", signing.new_secret())
                   for i, s in enumerate(names)]
        owner, bots = register(servers)
        install({url: strategy for strategy, url, _ in servers})
        label = {bot.pk: f"{strategy}#{i}" for i, (bot, (strategy, _, _)) in
                 enumerate(zip(bots, servers, strict=True))}
        options = Options(players=2, single_hand=not args.full_games).to_json()
        print(f"{args.runs} tournaments per mode, {args.games} games per pairing, field "
              f"{args.field}, single_hand={not args.full_games}", flush=True)
        for duplicate in (False, True):
            ratings: dict[int, list[float]] = {b.pk: [] for b in bots}
            widths: dict[int, list[float]] = {b.pk: [] for b in bots}
            started = time.perf_counter()
            for run in range(args.runs):
                t = services.tournament_create(
                    owner=owner, name=f"spread {duplicate} {run}", options=options,
                    games_per_pairing=args.games, duplicate_deals=duplicate, seed=5000 + run,
                    rated=False)
                for bot in bots:
                    services.entrant_enter(tournament_id=t.pk, bot_id=bot.pk, user=owner)
                services.tournament_start(tournament_id=t.pk, user=owner, dispatch=False)
                services.tournament_run_foreground(tournament_id=t.pk)
                fitted = Tournament.objects.get(pk=t.pk).bradley_terry["ratings"]
                for row in fitted:
                    ratings[row["bot"]].append(row["rating"])
                    if row["low"] is not None:  # None: the games gave no interval
                        widths[row["bot"]].append(row["high"] - row["low"])
            took = time.perf_counter() - started
            print(f"duplicate deals={duplicate} ({took:.0f} s)", flush=True)
            for bot in bots:
                values = ratings[bot.pk]
                print(f"  {label[bot.pk]:12} mean {statistics.mean(values):7.1f}"
                      f"  sd across runs {statistics.stdev(values):5.1f}"
                      f"  mean 95% interval width {_mean(widths[bot.pk]):5.1f}")
            for i, a in enumerate(bots):
                for b in bots[i + 1:]:
                    gaps = [x - y for x, y in zip(ratings[a.pk], ratings[b.pk], strict=True)]
                    print(f"  gap {label[a.pk]} - {label[b.pk]}: mean "
                          f"{statistics.mean(gaps):6.1f}  sd {statistics.stdev(gaps):5.1f}",
                          flush=True)
        from django.db import connections

        connections.close_all()


if __name__ == "__main__":
    main()
