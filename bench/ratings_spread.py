"""How much do Bradley-Terry ratings vary between repeated tournaments, with and without
duplicate deals? The figures behind docs/ratings.md.

    .venv/bin/python bench/ratings_spread.py [runs] [games_per_pairing] [table_size]
                                             [single_hand 0|1] [field: reference|twins]

Plays whole round-robin tournaments in-process with the engine alone (no server, no bots app)
between three simple strategies, each tournament with its own seed, and prints each bot's
mean Bradley-Terry rating and its standard deviation across the tournaments. The ``twins``
field replaces the random bot by a second copy of the shedder: two equal entrants whose true
gap is zero, so the spread of their gap is luck alone.
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# The repository first: run as bench/ratings_spread.py, this folder's arena.py would shadow it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ratings import GameResult, bradley_terry
from arena.schedule import round_robin
from games.uno import GameState, Move, Options, apply, legal_moves, new_game
from games.uno.cards import CODE_TO_CARD, COLOR_OF, COLORS, POINTS

Strategy = Callable[[GameState, int, list[Move], random.Random], Move]


def random_bot(state: GameState, seat: int, moves: list[Move], rng: random.Random) -> Move:
    """Any legal move, uniformly."""
    return rng.choice(moves)


def _best_colour(state: GameState, seat: int) -> str:
    counts = [0] * 5
    for card in state.hands[seat]:
        counts[COLOR_OF[card]] += 1
    return COLORS[max(range(4), key=lambda c: counts[c])]


def first_playable_bot(state: GameState, seat: int, moves: list[Move], rng: random.Random) -> Move:
    """The first card it may play (calling Uno), else draw; wilds take its commonest colour."""
    colour = _best_colour(state, seat)
    plays = [m for m in moves if m.type == "play" and (m.color in (None, colour))]
    if plays:
        calls = [m for m in plays if m.uno]
        return (calls or plays)[0]
    for kind in ("color", "accept", "draw", "keep"):
        for move in moves:
            if move.type == kind and (kind != "color" or move.color == colour):
                return move
    return moves[0]


def shedder_bot(state: GameState, seat: int, moves: list[Move], rng: random.Random) -> Move:
    """Sheds its most valuable card that keeps its colour, saves wilds for last, calls Uno,
    plays a card it just drew, and challenges nothing."""
    colour = _best_colour(state, seat)
    plays = [m for m in moves if m.type == "play" and (m.color in (None, colour))]
    if plays:

        def value(move: Move) -> tuple[int, int, int]:
            card = CODE_TO_CARD[move.card or ""]
            wild = COLOR_OF[card] == 4
            return (int(move.uno), -int(wild), POINTS[card])

        return max(plays, key=value)
    return first_playable_bot(state, seat, moves, rng)


STRATEGIES: dict[str, Strategy] = {
    "random": random_bot,
    "first_playable": first_playable_bot,
    "shedder": shedder_bot,
}
TWINS: dict[str, Strategy] = {
    "shedder_twin": shedder_bot,
    "first_playable": first_playable_bot,
    "shedder": shedder_bot,
}


def play(players: tuple[str, ...], options: Options, seed: int) -> GameResult:
    state = new_game(options, seed)
    rng = random.Random(seed)  # the bots' own randomness follows the deal
    while not state.finished:
        seat = state.turn
        moves = legal_moves(state, seat)
        apply(state, seat, STRATEGIES[players[seat]](state, seat, moves, rng))
    points_left = tuple(state.last_hand["hand_points"]) if state.last_hand else (0,) * state.n
    return GameResult(
        players=players,
        winner=state.winner,
        points_left=points_left,
        scores=tuple(state.scores),
    )


def tournament(seed: int, games: int, size: int, duplicate: bool, options: Options) -> dict:
    schedule = round_robin(
        list(STRATEGIES),
        seed=seed,
        table_size=size,
        games_per_pairing=games,
        duplicate_deals=duplicate,
    )
    results = [
        dataclasses.replace(play(g.players, options, g.seed), deal=g.deal if duplicate else None)
        for g in schedule
    ]
    rated = bradley_terry(results, entrants=list(STRATEGIES), resamples=200, seed=seed)
    return {name: line for name, line in rated.items()}


def _mean(values: list[float]) -> float:
    """The mean interval width, nan if no tournament gave an interval."""
    return statistics.mean(values) if values else math.nan


def main() -> None:
    args = sys.argv[1:] + ["10", "60", "2", "0", "reference"][len(sys.argv) - 1 :]
    runs, games, size, single = int(args[0]), int(args[1]), int(args[2]), args[3] == "1"
    if args[4] == "twins":
        STRATEGIES.clear()
        STRATEGIES.update(TWINS)
    options = Options(players=size, single_hand=single)
    print(
        f"{runs} tournaments per mode, {games} games per table of {size},"
        f" single_hand={single}, field={args[4]}"
    )
    for duplicate in (False, True):
        started = time.perf_counter()
        ratings: dict[str, list[float]] = {name: [] for name in STRATEGIES}
        widths: dict[str, list[float]] = {name: [] for name in STRATEGIES}
        for run in range(runs):
            for name, line in tournament(1000 + run, games, size, duplicate, options).items():
                ratings[name].append(line.rating)
                if not math.isnan(line.low):  # nan: the games gave no interval
                    widths[name].append(line.high - line.low)
        took = time.perf_counter() - started
        print(f"duplicate deals={duplicate} ({took:.0f} s)")
        for name in STRATEGIES:
            values = ratings[name]
            print(
                f"  {name:15} mean {statistics.mean(values):7.1f}"
                f"  sd across runs {statistics.stdev(values):5.1f}"
                f"  mean 95% interval width {_mean(widths[name]):5.1f}"
            )
        names = list(STRATEGIES)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                gaps = [x - y for x, y in zip(ratings[a], ratings[b], strict=True)]
                print(
                    f"  gap {a} - {b}: mean {statistics.mean(gaps):6.1f}"
                    f"  sd {statistics.stdev(gaps):5.1f}"
                )


if __name__ == "__main__":
    main()
