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

Ratings are reported on the Elo scale: ``400 * log10(p_i)``, shifted so that the mean of the
entrants with games is 1500. An entrant with no games (a tournament cancelled before its
first) has no rating at all (nan; null in the API): the prior alone would give it the virtual
opponent's strength, a rating that says nothing yet ranks it among those who played.
The 95% interval of each rating is the 2.5th and 97.5th percentile of its rating
over bootstrap tournaments: the stored games resampled with replacement (whole games, so a
multi-seat game's pairs stay together, and all the seatings of a duplicate deal together),
each rated the same way and centred the same way.
The interval is unknown (nan; null in the API) where the games cannot give one: when there
are fewer than two distinct resampling units (one game, one deal, or all of them alike), as
every resample is then the tournament itself; for an entrant with no games, which has no
rating either; and for an entrant whose rating every resample agrees on. A zero-width
interval there would claim a certainty that the games do not hold.
Resampling uses numpy's PCG64 generator seeded with ``seed``: the same games in the same order
with the same seed give the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from .results import Entrant, GameResult

MEAN_RATING = 1500.0
PRIOR = 1.0  # virtual drawn games of each entrant against a fixed opponent of strength 1
RESAMPLES = 1000
_BATCH_CELLS = 4_000_000  # numbers per array in one batch of resamples (32 MB)
_TOLERANCE = 1e-10  # stop when no log-strength moves more than this in a step
_MAX_ITERATIONS = 500
_MAX_STEP = 1.0  # largest change of a natural-log strength in one Newton step
_NO_WIDTH = 1e-6  # rating points: an interval this narrow is every resample agreeing

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BTRating:
    entrant: Entrant
    rating: float  # nan for an entrant with no games (see the module)
    low: float  # 2.5th percentile over the bootstrap; nan when unknown (see the module)
    high: float  # 97.5th percentile; nan when unknown
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
    # One BLAS thread: the work is many small solves, which threads only slow down, and on a
    # busy machine (web and worker processes on a few cores) OpenBLAS's own threads made the
    # batched solves 40 times slower (6.4 s instead of 0.15 s for 400 solves of 100 x 100).
    with threadpool_limits(limits=1, user_api="blas"):
        rated = [result for result in results if result.rated]  # see GameResult.rated
        return _bradley_terry(rated, entrants, resamples, seed, prior)


def _bradley_terry(
    games: list[GameResult],
    entrants: Sequence[Entrant],
    resamples: int,
    seed: int,
    prior: float,
) -> dict[Entrant, BTRating]:
    names = _entrant_order(games, entrants)
    # Only the entrants seated in a game are fitted (and centred): one without games has no
    # rating (nan), where the prior alone would give it the anchor's and rank it among them.
    seated = {player for game in games for player in game.players}
    unrated = {name: BTRating(name, math.nan, math.nan, math.nan, 0)
               for name in names if name not in seated}
    names = [name for name in names if name in seated]
    if not names:
        return unrated
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    units = _Units(games, index, n)
    point = _centred(_fit(units.wins(units.counts[None, :]), n, prior))[0]
    played = _games_played(games, index, n)
    low = high = np.full(n, np.nan)
    if resamples > 0 and len(units.counts) >= 2:  # else every resample is the tournament
        rng = np.random.Generator(np.random.PCG64(seed))
        total = int(units.counts.sum())
        # In batches, so that a big field never holds (resamples x n x n) arrays at once.
        batch = max(1, min(resamples, _BATCH_CELLS // max(n * n, len(units.unit_of), 1)))
        boot = np.empty((resamples, n))
        for start in range(0, resamples, batch):
            size = min(batch, resamples - start)
            draws = rng.multinomial(total, units.counts / total, size=size).astype(np.float64)
            boot[start : start + size] = _centred(_fit(units.wins(draws), n, prior))
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
        unknown = high - low < _NO_WIDTH
        low, high = np.where(unknown, np.nan, low), np.where(unknown, np.nan, high)
    return {
        **{name: BTRating(name, float(point[i]), float(low[i]), float(high[i]), int(played[i]))
           for i, name in enumerate(names)},
        **unrated,
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


class _Units:
    """The resampling units of a tournament, each distinct outcome once with its count.

    A unit is a game, or all the games of one duplicate deal (same ``deal``): the seatings of
    a deal are resampled together, or the bootstrap would miss how they cancel each other's
    luck and give intervals as wide as without duplicate deals. Resampling the distinct
    outcomes with multinomial weights is the same as resampling the units, and there are few
    of them. Each outcome is kept sparse, as (unit, cell, share) entries where cell
    ``i * n + j`` holds the wins of ``i`` over ``j``: a field of 100 bots has 10,000 cells.
    """

    def __init__(self, games: list[GameResult], index: dict[Entrant, int], n: int) -> None:
        self.n = n
        raw: dict[object, dict[int, float]] = {}
        for position, game in enumerate(games):
            unit = raw.setdefault(("game", position) if game.deal is None else game.deal, {})
            places = game.places()
            weight = 1.0 / (game.size - 1)
            seats = [index[p] for p in game.players]
            for a in range(game.size):
                for b in range(game.size):
                    if a != b and places[a] <= places[b]:
                        cell = seats[a] * n + seats[b]
                        share = weight if places[a] < places[b] else weight / 2
                        unit[cell] = unit.get(cell, 0.0) + share
        distinct: dict[tuple[tuple[int, float], ...], int] = {}
        for cells in raw.values():
            key = tuple(sorted(cells.items()))
            distinct[key] = distinct.get(key, 0) + 1
        self.counts: Floats = np.array(list(distinct.values()), dtype=np.float64)
        entries = sorted((cell, u, share) for u, key in enumerate(distinct) for cell, share in key)
        self.cell_of = np.array([e[0] for e in entries], dtype=np.intp)
        self.unit_of = np.array([e[1] for e in entries], dtype=np.intp)
        self.share: Floats = np.array([e[2] for e in entries], dtype=np.float64)
        # Entries are sorted by cell: where each cell's run starts, to sum runs in one call.
        self.cells, self.starts = np.unique(self.cell_of, return_index=True)

    def wins(self, weights: Floats) -> Floats:
        """(batch, n*n) wins of tournaments that hold each distinct outcome ``weights`` times."""
        out = np.zeros((weights.shape[0], self.n * self.n))
        if len(self.cell_of):
            parts = weights[:, self.unit_of] * self.share
            out[:, self.cells] = np.add.reduceat(parts, self.starts, axis=1)
        return out


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
