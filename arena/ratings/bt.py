"""Bradley-Terry maximum-likelihood ratings of one tournament, with bootstrap intervals.

Model: entrant ``i`` has a strength ``p_i > 0`` and finishes ahead of ``j`` with probability
``p_i / (p_i + p_j)``. The strengths that make the tournament's pairwise results most likely
are found with Newton's method (see ``_fit``). ``W_i`` is ``i``'s wins (a tie is half a win
to each), ``N_ij`` the comparisons between ``i`` and ``j``. A game with ``n`` seats gives each
of its n(n-1)/2 pairs the weight ``1 / (n - 1)``, so one game weighs the same for a seat at any
table size (as Elo's ``K / (n - 1)``).

Prior: every entrant also gets ``PRIOR`` virtual games, drawn (half won, half lost), against a
virtual opponent of fixed strength 1. Without it an entrant that won every game would have an
infinite strength (and one that lost all, zero), and entrants never compared through any chain
of games would have no common scale. One virtual game is weak: it moves a 60-game record only
a little, and pulls a perfect 10-0 record to a large but finite rating.

Ratings are reported on the Elo scale: ``400 * log10(p_i)``, shifted so that the entrants'
mean is 1500. The 95% interval of each rating is the 2.5th and 97.5th percentile of its rating
over bootstrap tournaments: the stored games resampled with replacement (whole games, so a
multi-seat game's pairs stay together, and all the seatings of a duplicate deal together),
each rated the same way and centred the same way.
Resampling uses numpy's PCG64 generator seeded with ``seed``: the same games in the same order
with the same seed give the same intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .results import Entrant, GameResult

MEAN_RATING = 1500.0
PRIOR = 1.0  # virtual drawn games of each entrant against a fixed opponent of strength 1
RESAMPLES = 1000
_TOLERANCE = 1e-10  # stop when no log-strength moves more than this in a step
_MAX_ITERATIONS = 500
_MAX_STEP = 1.0  # largest change of a natural-log strength in one Newton step

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BTRating:
    entrant: Entrant
    rating: float
    low: float  # 2.5th percentile over the bootstrap, nan when there were no resamples
    high: float  # 97.5th percentile
    games: int


def bradley_terry(
    results: Iterable[GameResult],
    *,
    entrants: Sequence[Entrant] = (),
    resamples: int = RESAMPLES,
    seed: int = 0,
    prior: float = PRIOR,
) -> dict[Entrant, BTRating]:
    """Ratings of ``entrants`` (plus anyone seated in ``results``), keyed by entrant."""
    games = list(results)
    names = _entrant_order(games, entrants)
    index = {name: i for i, name in enumerate(names)}
    rows, counts = _game_rows(games, index, len(names))
    point = _centred(_fit((counts @ rows)[None, :], len(names), prior))[0]
    low = high = np.full(len(names), np.nan)
    if resamples > 0 and games:
        rng = np.random.Generator(np.random.PCG64(seed))
        units = int(counts.sum())
        draws = rng.multinomial(units, counts / units, size=resamples)
        boot = _centred(_fit(draws.astype(np.float64) @ rows, len(names), prior))
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    played = _games_played(games, index, len(names))
    return {
        name: BTRating(name, float(point[i]), float(low[i]), float(high[i]), int(played[i]))
        for i, name in enumerate(names)
    }


def _entrant_order(games: list[GameResult], entrants: Sequence[Entrant]) -> list[Entrant]:
    # Order only decides array positions; the ratings do not depend on it.
    names = list(dict.fromkeys(entrants))
    seen = set(names)
    for game in games:
        for player in game.players:
            if player not in seen:
                seen.add(player)
                names.append(player)
    return names


def _game_rows(games: list[GameResult], index: dict[Entrant, int], n: int) -> tuple[Floats, Floats]:
    """Each distinct resampling unit's outcome as a flattened ``wins[i, j]`` row, and how
    often it occurred.

    The unit is a game, or all the games of one duplicate deal (same ``deal``): the seatings
    of a deal are resampled together, or the bootstrap would miss how they cancel each other's
    luck and give intervals as wide as without duplicate deals. Resampling the distinct rows
    with multinomial weights is the same as resampling the units, and there are few of them.
    """
    units: dict[object, dict[tuple[int, int], float]] = {}
    for position, game in enumerate(games):
        unit = units.setdefault(("game", position) if game.deal is None else game.deal, {})
        places = game.places()
        weight = 1.0 / (game.size - 1)
        seats = [index[p] for p in game.players]
        for a in range(game.size):
            for b in range(game.size):
                if a != b and places[a] <= places[b]:
                    share = weight if places[a] < places[b] else weight / 2
                    cell = (seats[a], seats[b])
                    unit[cell] = unit.get(cell, 0.0) + share
    table: dict[tuple[tuple[tuple[int, int], float], ...], int] = {}
    for cells in units.values():
        key = tuple(sorted(cells.items()))
        table[key] = table.get(key, 0) + 1
    rows = np.zeros((len(table), n * n))
    for r, key in enumerate(table):
        for (a, b), share in key:
            rows[r, a * n + b] = share
    return rows, np.array(list(table.values()), dtype=np.float64)


def _fit(wins_flat: Floats, n: int, prior: float) -> Floats:
    """Maximum likelihood on a batch of tournaments: ``wins_flat`` is (batch, n*n), the wins
    of ``i`` over ``j`` at ``i * n + j``; returns the log10 strengths, (batch, n).

    Newton's method on the log-strengths ``t_i = ln p_i``; the log-likelihood

        sum_i W_i t_i - sum_{i<j} N_ij ln(e^t_i + e^t_j) - PRIOR * sum_i ln(e^t_i + 1)

    is strictly concave thanks to the prior, so the Newton step is an ascent direction; it is
    clipped to ``_MAX_STEP`` so a lopsided record cannot overshoot. (The textbook MM iteration
    reaches the same point, but took some 12,000 steps on a 2,000-game tournament: the common
    scale is held only by the weak prior. Newton takes about ten.)
    """
    batch = wins_flat.shape[0]
    wins = wins_flat.reshape(batch, n, n)
    won = wins.sum(axis=2) + prior / 2
    met = wins + wins.transpose(0, 2, 1)
    theta = np.zeros((batch, n))
    diagonal = np.arange(n)
    for _ in range(_MAX_ITERATIONS):
        ahead = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(i beats j)
        over_anchor = 1.0 / (1.0 + np.exp(-theta))
        gradient = won - (met * ahead).sum(axis=2) - prior * over_anchor
        curvature = met * ahead * (1.0 - ahead)
        hessian = curvature.copy()
        hessian[:, diagonal, diagonal] = -curvature.sum(axis=2) - prior * over_anchor * (
            1.0 - over_anchor
        )
        step = -np.linalg.solve(hessian, gradient[:, :, None])[:, :, 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, _MAX_STEP / np.maximum(largest, 1e-300))
        theta += step
        if largest.max(initial=0.0) < _TOLERANCE:
            break
    log10: Floats = theta / np.log(10.0)
    return log10


def _centred(log_strength: Floats) -> Floats:
    ratings: Floats = 400.0 * log_strength
    centred: Floats = ratings - ratings.mean(axis=1, keepdims=True) + MEAN_RATING
    return centred


def _games_played(games: list[GameResult], index: dict[Entrant, int], n: int) -> list[int]:
    played = [0] * n
    for game in games:
        for player in game.players:
            played[index[player]] += 1
    return played
