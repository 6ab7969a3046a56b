"""Elo, updated game by game, with multi-seat games as simultaneous pairwise results.

The update for one game with ``n`` seats, from the ratings *before* the game:

    expected(a, b) = 1 / (1 + 10 ** ((R_b - R_a) / 400))
    delta_a = sum over every other seat b of  K / (n - 1) * (S_ab - expected(a, b))

where ``S_ab`` is 1 if ``a`` finished ahead of ``b``, 0.5 for a tie and 0 behind (see
``GameResult.places``). All seats' deltas are computed first and then applied together, so the
seat order inside a game does not matter. With two seats this is the textbook update with the
full ``K``; with more, ``K / (n - 1)`` keeps one game worth at most ``K`` to a seat however many
opponents it had. Each pair's two deltas cancel, so every game is zero-sum.

Games are applied one after the other, in the order the caller gives: the tournament services
order them by finishing time, then by game id, so the same games always give the same ratings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .results import Entrant, GameResult

DEFAULT_START = 1500.0
DEFAULT_K = 16.0


def expected_score(rating: float, opponent: float) -> float:
    """The probability-like score Elo expects of ``rating`` against ``opponent``."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One entrant's rating before and after one game: a row of its history."""

    entrant: Entrant
    game_id: object
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


def game_deltas(
    result: GameResult, ratings: Mapping[Entrant, float], *, k: float = DEFAULT_K
) -> dict[Entrant, float]:
    """Each seat's rating change from one game, from the pre-game ``ratings``."""
    places = result.places()
    players = result.players
    pair_k = k / (result.size - 1)
    deltas = dict.fromkeys(players, 0.0)
    for i, a in enumerate(players):
        for j in range(i + 1, len(players)):
            b = players[j]
            score = 1.0 if places[i] < places[j] else 0.0 if places[i] > places[j] else 0.5
            change = pair_k * (score - expected_score(ratings[a], ratings[b]))
            deltas[a] += change
            deltas[b] -= change
    return deltas


class EloLadder:
    """The ratings of one rule set, fed finished games in their fixed order."""

    def __init__(
        self,
        *,
        start: float = DEFAULT_START,
        k: float = DEFAULT_K,
        ratings: Mapping[Entrant, float] | None = None,
    ) -> None:
        self.start = start
        self.k = k
        self.ratings: dict[Entrant, float] = dict(ratings or {})

    def rating(self, entrant: Entrant) -> float:
        return self.ratings.get(entrant, self.start)

    def apply(self, result: GameResult) -> list[RatingChange]:
        """Rate one game; returns one history row per seat, in seat order (none for a game
        that is not rated: ``GameResult.rated``)."""
        if not result.rated:
            return []
        before = {player: self.rating(player) for player in result.players}
        deltas = game_deltas(result, before, k=self.k)
        changes = []
        for player in result.players:
            after = before[player] + deltas[player]
            self.ratings[player] = after
            changes.append(RatingChange(player, result.game_id, before[player], after))
        return changes

    def apply_all(self, results: Iterable[GameResult]) -> list[RatingChange]:
        history: list[RatingChange] = []
        for result in results:
            history.extend(self.apply(result))
        return history


def elo_ratings(
    results: Iterable[GameResult], *, start: float = DEFAULT_START, k: float = DEFAULT_K
) -> tuple[dict[Entrant, float], list[RatingChange]]:
    """Ratings after ``results`` (in order) from ``start``, and the history of every change."""
    ladder = EloLadder(start=start, k=k)
    history = ladder.apply_all(results)
    return ladder.ratings, history
