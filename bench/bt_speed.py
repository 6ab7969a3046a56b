"""Bradley-Terry with bootstrap: the numpy implementation against the same MM in pure Python.

    .venv/bin/python bench/bt_speed.py [bots] [games] [resamples]

Synthetic two-seat games between bots of known strengths; prints both timings and the largest
difference between the two implementations' point ratings (they run the same iteration).
"""

from __future__ import annotations

import math
import random
import sys
import time

from arena.ratings import GameResult, bradley_terry
from arena.ratings.bt import _MAX_ITERATIONS, _MAX_STEP, _TOLERANCE, MEAN_RATING, PRIOR


def synthetic_games(bots: int, games: int, seed: int = 1) -> list[GameResult]:
    rng = random.Random(seed)
    strengths = [10 ** (rng.uniform(-200, 200) / 400) for _ in range(bots)]
    out = []
    for g in range(games):
        a, b = rng.sample(range(bots), 2)
        a_wins = rng.random() < strengths[a] / (strengths[a] + strengths[b])
        out.append(
            GameResult(players=(a, b), winner=0 if a_wins else 1, points_left=(0, 0), game_id=g)
        )
    return out


def pure_fit(wins: dict[tuple[int, int], float], n: int, prior: float = PRIOR) -> list[float]:
    """The same clipped Newton iteration as ``arena.ratings.bt._fit``, in lists."""
    won = [prior / 2] * n
    met = [[0.0] * n for _ in range(n)]
    for (a, b), w in wins.items():
        won[a] += w
        met[a][b] += w
        met[b][a] += w
    theta = [0.0] * n
    for _ in range(_MAX_ITERATIONS):
        gradient = []
        hessian = [[0.0] * n for _ in range(n)]
        for i in range(n):
            anchor = 1.0 / (1.0 + math.exp(-theta[i]))
            g = won[i] - prior * anchor
            diag = -prior * anchor * (1.0 - anchor)
            for j in range(n):
                if met[i][j]:
                    ahead = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
                    g -= met[i][j] * ahead
                    c = met[i][j] * ahead * (1.0 - ahead)
                    hessian[i][j] = c
                    diag -= c
            hessian[i][i] = diag
            gradient.append(g)
        step = [-x for x in solve(hessian, gradient)]
        largest = max(abs(x) for x in step)
        scale = min(1.0, _MAX_STEP / max(largest, 1e-300))
        theta = [t + scale * x for t, x in zip(theta, step, strict=True)]
        if largest < _TOLERANCE:
            break
    ratings = [400 * t / math.log(10) for t in theta]
    shift = MEAN_RATING - sum(ratings) / n
    return [r + shift for r in ratings]


def solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(rhs)
    a = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            if f:
                row, top = a[r], a[col]
                for c in range(col, n + 1):
                    row[c] -= f * top[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def pure_bradley_terry(
    games: list[GameResult], n: int, resamples: int, seed: int
) -> tuple[list[float], list[tuple[float, float]]]:
    pairs = []
    for game in games:
        places = game.places()
        a, b = game.players
        if places[0] == places[1]:
            pairs.append(((a, b, 0.5), (b, a, 0.5)))
        else:
            pairs.append(((a, b, 1.0),) if places[0] < places[1] else ((b, a, 1.0),))

    def aggregate(chosen: list[int]) -> dict[tuple[int, int], float]:
        wins: dict[tuple[int, int], float] = {}
        for g in chosen:
            for a, b, w in pairs[g]:
                wins[(a, b)] = wins.get((a, b), 0.0) + w
        return wins

    point = pure_fit(aggregate(list(range(len(games)))), n)
    rng = random.Random(seed)
    boots = [
        pure_fit(aggregate(rng.choices(range(len(games)), k=len(games))), n)
        for _ in range(resamples)
    ]
    intervals = []
    for i in range(n):
        column = sorted(b[i] for b in boots)
        intervals.append((column[int(0.025 * resamples)], column[int(0.975 * resamples) - 1]))
    return point, intervals


def main() -> None:
    defaults = ["10", "2000", "1000"]
    bots, games, resamples = (int(a) for a in sys.argv[1:] + defaults[len(sys.argv) - 1 :])
    results = synthetic_games(bots, games)
    started = time.perf_counter()
    fast = bradley_terry(results, resamples=resamples, seed=7)
    numpy_s = time.perf_counter() - started
    started = time.perf_counter()
    slow, _ = pure_bradley_terry(results, bots, resamples, seed=7)
    pure_s = time.perf_counter() - started
    gap = max(abs(fast[i].rating - slow[i]) for i in range(bots))
    print(f"{bots} bots x {games} games x {resamples} resamples")
    print(f"numpy:       {numpy_s:8.2f} s")
    print(f"pure Python: {pure_s:8.2f} s  ({pure_s / numpy_s:.0f}x)")
    print(f"largest point-rating difference: {gap:.2e}")


if __name__ == "__main__":
    main()
