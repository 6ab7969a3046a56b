"""What a finished game contributes to ratings and standings, and its pairwise expansion.

Pure Python, no Django: the tournament services turn stored games into ``GameResult`` records
and hand them to ``elo``, ``bradley_terry`` and ``standings``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field

Entrant = Hashable  # a bot id (or any hashable key); the same entrant never sits twice in a game


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game, seat by seat.

    ``players[s]`` is the entrant in seat ``s``; every per-seat tuple is in the same order.
    ``points_left`` is the value of the cards each seat held when the game ended (the last
    hand's ``hand_points``); ``scores`` the match scores. ``winner`` is a seat, or None when
    the game ended without one (a turn cap, a tied match).
    """

    players: tuple[Entrant, ...]
    winner: int | None
    points_left: tuple[int, ...]
    scores: tuple[int, ...] = ()
    strikes: tuple[int, ...] = ()
    forfeited: frozenset[int] = field(default_factory=frozenset)
    game_id: object = None  # the stored game's id, carried into rating histories
    deal: object = None  # games of one duplicate deal share it (unique within a tournament)
    # False: a game nobody won by playing (aborted by staff, or every seat forfeited): it
    # counts in the standings (games, strikes, forfeits) but moves no rating, Elo or BT.
    rated: bool = True

    def __post_init__(self) -> None:
        n = len(self.players)
        if n < 2:
            raise ValueError("a game has at least two players")
        if len(set(self.players)) != n:
            raise ValueError("an entrant sits at most once in a game")
        if len(self.points_left) != n:
            raise ValueError("points_left needs one value per seat")
        for name in ("scores", "strikes"):
            values = getattr(self, name)
            if values and len(values) != n:
                raise ValueError(f"{name} needs one value per seat (or none)")
        if self.winner is not None and (type(self.winner) is not int or not 0 <= self.winner < n):
            raise ValueError("winner must be a seat of this game")
        if any(not 0 <= seat < n for seat in self.forfeited):
            raise ValueError("forfeited seats must be seats of this game")

    @property
    def size(self) -> int:
        return len(self.players)

    def places(self) -> tuple[int, ...]:
        """Each seat's finishing place, 0 best; seats that tie share a place.

        The order: the winner first; then the seats that did not forfeit, fewest points left
        in hand first; the seats that forfeited last (among themselves also by points left).
        Seats with the same key tie, as in sport's "1224" ranking.
        """
        keys = [self._key(seat) for seat in range(self.size)]
        return tuple(sum(1 for other in keys if other < key) for key in keys)

    def _key(self, seat: int) -> tuple[int, int, int]:
        return (
            0 if seat == self.winner else 1,
            1 if seat in self.forfeited else 0,
            self.points_left[seat],
        )


@dataclass(frozen=True, slots=True)
class Pairwise:
    """One pairwise comparison from a game: ``score`` is 1 if ``a`` finished ahead of ``b``,
    0.5 if they tied, 0 if behind."""

    a: Entrant
    b: Entrant
    score: float


def pairwise(result: GameResult) -> Iterator[Pairwise]:
    """Every pair of seats of the game once, lower seat first: n(n-1)/2 comparisons.

    A two-seat game gives one comparison: a win, a loss or (no winner, equal points) a draw.
    """
    places = result.places()
    players = result.players
    for i in range(result.size):
        for j in range(i + 1, result.size):
            if places[i] < places[j]:
                score = 1.0
            elif places[i] > places[j]:
                score = 0.0
            else:
                score = 0.5
            yield Pairwise(players[i], players[j], score)
