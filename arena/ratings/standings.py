"""A tournament's standings table, computed from its finished games."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .results import Entrant, GameResult


@dataclass(frozen=True, slots=True)
class Standing:
    """One entrant's line. ``points`` is the sum of its match scores (the points it won);
    ``avg_points_left`` the mean value of the cards it still held when each game ended."""

    entrant: Entrant
    games: int
    wins: int
    points: int
    points_left: int
    strikes: int
    forfeits: int

    @property
    def win_rate(self) -> float | None:
        """None without games: no rate, rather than a 0% it did not earn."""
        return self.wins / self.games if self.games else None

    @property
    def avg_points_left(self) -> float | None:
        return self.points_left / self.games if self.games else None


def standings(results: Iterable[GameResult], *, entrants: Sequence[Entrant] = ()) -> list[Standing]:
    """Every entrant's line, best first: higher win rate, then more wins, then more points,
    then fewer points left on average; entrants still level keep the order they were given
    (then first appearance), so the table is stable. Win rate first: while a tournament runs,
    or once it was cancelled, the entrants have not played as many games each (in a finished
    round robin they have, and the order is the same as by wins). Entrants without a game
    (no win rate) come last."""
    totals: dict[Entrant, list[int]] = {e: [0] * 6 for e in entrants}
    for result in results:
        for seat, player in enumerate(result.players):
            line = totals.setdefault(player, [0] * 6)
            line[0] += 1
            line[1] += seat == result.winner
            line[2] += result.scores[seat] if result.scores else 0
            line[3] += result.points_left[seat]
            line[4] += result.strikes[seat] if result.strikes else 0
            line[5] += seat in result.forfeited
    table = [Standing(entrant, *line) for entrant, line in totals.items()]
    table.sort(key=lambda s: (s.games == 0, -(s.win_rate or 0.0), -s.wins, -s.points,
                              s.avg_points_left or 0.0))
    return table
