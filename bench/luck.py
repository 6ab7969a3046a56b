"""How much luck is in one hand: the figures under "How much luck is in one hand (measured)"
in docs/ratings.md.

Run: ``python bench/luck.py [--hands 400] [--tournaments 200] [--seed 0]
[--field random,greedy,greedy,heuristic]`` (the engine alone: no database, no server; about a
minute and a half for the defaults on a busy 2-core machine).

The reference strategies of ``bots.strategies`` (those the tournament bots play), single
hands (``{"single_hand": true}``), every game played by ``bots.evaluate.play_to_end``: only
the awaited seat is asked, as the arena asks its bots, each seat with its own RNG seeded from
the game's seed (a bot served over HTTP keeps one RNG for all its games instead: the same
odds, other draws).

It prints:

1. The pairing table: ``--hands`` two-seat hands per pairing, seats alternated, hand ``i``
   dealt with seed ``--seed + i`` (seeds 0 to 399 by default), as ``python -m bots.evaluate
   --games 400 --seed 0 --options '{"single_hand": true}'`` plays them: each bot's share of
   the wins with its 95% Wilson interval.
2. For each of three settings, 8 hands per pairing with duplicate deals, 12 with, 12
   without: in how many of ``--tournaments`` simulated round robins (two seats, tournament
   seeds ``--seed`` to ``--seed + tournaments - 1``, scheduled and dealt by
   ``arena.schedule.round_robin`` as the arena does) random finished above the heuristic bot,
   with its 95% Wilson interval. "Above" as the arena ranks a tournament: its standings
   (``arena.ratings.standings``: win rate, then wins, points, fewer points left, then the
   entry order: the ``--field`` order here, the bots' ids in the arena). The count by the
   Bradley-Terry point rating (``arena.ratings.bradley_terry``) is printed too. With several
   random or heuristic bots in the field, it counts the tournaments where the best random
   finished above the worst heuristic.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ratings import GameResult, bradley_terry, standings
from arena.schedule import round_robin
from bots.evaluate import PAIRINGS, match_up, play_to_end, wilson
from bots.strategies import STRATEGIES
from games.uno import Options

SINGLE_HAND = Options.from_json({"single_hand": True, "players": 2})
TOURNAMENTS = ((8, True), (12, True), (12, False))  # hands per pairing, duplicate deals
DEFAULT_FIELD = "random,greedy,greedy,heuristic"


def entrants_of(field: Sequence[str]) -> dict[str, str]:
    """Each entrant's label (``greedy``, ``greedy-2``...) and its strategy, in field order."""
    labels: dict[str, str] = {}
    for name in field:
        if name not in STRATEGIES:
            raise SystemExit(f"unknown strategy {name!r}: one of {', '.join(STRATEGIES)}")
        copies = sum(1 for strategy in labels.values() if strategy == name)
        labels[name if not copies else f"{name}-{copies + 1}"] = name
    return labels


def tournament(
    entrants: dict[str, str], seed: int, hands: int, duplicate: bool
) -> list[GameResult]:
    """The finished games of one simulated round robin of single hands at two seats."""
    results = []
    for game in round_robin(
        list(entrants),
        seed=seed,
        table_size=2,
        games_per_pairing=hands,
        duplicate_deals=duplicate,
    ):
        players = [STRATEGIES[entrants[str(label)]] for label in game.players]
        state = play_to_end(SINGLE_HAND, game.seed, players)
        points_left = tuple(state.last_hand["hand_points"]) if state.last_hand else (0, 0)
        results.append(
            GameResult(
                players=game.players,
                winner=state.winner,
                points_left=points_left,
                scores=tuple(state.scores),
                deal=game.deal if duplicate else None,
            )
        )
    return results


def random_above_heuristic(entrants: dict[str, str], order: Sequence[str]) -> bool:
    """Whether the best-placed random bot is above the worst-placed heuristic one in
    ``order`` (best first)."""
    places = {label: i for i, label in enumerate(order)}
    best_random = min(places[e] for e, s in entrants.items() if s == "random")
    worst_heuristic = max(places[e] for e, s in entrants.items() if s == "heuristic")
    return best_random < worst_heuristic


def share(count: int, total: int) -> str:
    low, high = wilson(count, total)
    return f"{count:3}/{total} = {count / total:5.1%}  95% CI [{low:.1%}, {high:.1%}]"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=400, help="hands per pairing (400)")
    parser.add_argument("--tournaments", type=int, default=200, help="per setting (200)")
    parser.add_argument("--seed", type=int, default=0, help="first hand/tournament seed (0)")
    parser.add_argument(
        "--field", default=DEFAULT_FIELD, help=f"the tournament's entrants ({DEFAULT_FIELD})"
    )
    args = parser.parse_args(argv)
    entrants = entrants_of(args.field.split(","))
    if "random" not in entrants.values() or "heuristic" not in entrants.values():
        raise SystemExit("the field needs a random and a heuristic bot")

    started = time.perf_counter()
    last = args.seed + args.hands - 1
    print(f"Single hands, two seats, {args.hands} per pairing, seeds {args.seed} to {last}:")
    for pair in PAIRINGS:
        tally = match_up(pair, args.hands, SINGLE_HAND, args.seed)
        first = pair[0]
        low, high = wilson(tally.wins[first], tally.games)
        print(
            f"  {' vs '.join(pair):22} {first + ' wins':14} {tally.wins[first] / tally.games:7.2%}"
            f"  95% CI [{low:.1%}, {high:.1%}]  ({tally.wins[first]}/{tally.games}"
            + (f", {tally.no_winner} without a winner" if tally.no_winner else "")
            + ")"
        )
    print(f"  ({time.perf_counter() - started:.0f} s)")

    last = args.seed + args.tournaments - 1
    print(
        f"\nRandom above heuristic: round robins of {', '.join(entrants)}, two seats,"
        f" tournament seeds {args.seed} to {last}:"
    )
    for hands, duplicate in TOURNAMENTS:
        started = time.perf_counter()
        by_standings = by_rating = 0
        for seed in range(args.seed, args.seed + args.tournaments):
            results = tournament(entrants, seed, hands, duplicate)
            table = [str(line.entrant) for line in standings(results, entrants=list(entrants))]
            by_standings += random_above_heuristic(entrants, table)
            rated = bradley_terry(results, entrants=list(entrants), resamples=0)
            by_bt = sorted(rated, key=lambda e: -rated[e].rating)
            by_rating += random_above_heuristic(entrants, [str(e) for e in by_bt])
        deals = "with duplicate deals" if duplicate else "without duplicate deals"
        print(f"  {hands} hands per pairing {deals} ({time.perf_counter() - started:.0f} s)")
        print(f"    standings:      {share(by_standings, args.tournaments)}")
        print(f"    Bradley-Terry:  {share(by_rating, args.tournaments)}")


if __name__ == "__main__":
    main()
