"""Ratings and standings: pure functions over finished games, no Django, no bots.

``canonical_rule_set`` names the Elo ladder a game counts for; ``EloLadder`` / ``elo_ratings``
keep the persistent Elo; ``bradley_terry`` rates one tournament with bootstrap intervals;
``standings`` tabulates it. See docs/ratings.md.
"""

from .bt import BTRating, bradley_terry
from .elo import DEFAULT_K, DEFAULT_START, EloLadder, RatingChange, elo_ratings, expected_score
from .results import Entrant, GameResult, Pairwise, pairwise
from .rule_sets import OFFICIAL, canonical_rule_set
from .standings import Standing, standings

__all__ = [
    "DEFAULT_K",
    "DEFAULT_START",
    "OFFICIAL",
    "BTRating",
    "EloLadder",
    "Entrant",
    "GameResult",
    "Pairwise",
    "RatingChange",
    "Standing",
    "bradley_terry",
    "canonical_rule_set",
    "elo_ratings",
    "expected_score",
    "pairwise",
    "standings",
]
