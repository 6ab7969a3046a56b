"""Fabricated example bodies for the tournament and rating operations of the schema."""

from __future__ import annotations

from typing import Any

OPTIONS = {
    "players": 2, "stacking": False, "seven_o": False, "jump_in": False,
    "draw_until_playable": False, "deck_2018": False, "start_2022": False,
    "single_hand": True, "target_score": 500,
}
CREATE_REQUEST = {"name": "Friday round robin", "options": {"single_hand": True},
                  "table_size": 2, "games_per_pairing": 4, "duplicate_deals": True,
                  "turn_timeout_ms": 1000, "max_strikes": 3, "rated": True}
ENTER_REQUEST = {"bot": 3}
_ENTRANTS = [
    {"bot": 3, "name": "greedy-1", "owner": "alice", "entered_at": "2026-01-05T10:05:00Z"},
    {"bot": 5, "name": "cautious", "owner": "bob", "entered_at": "2026-01-05T10:06:00Z"},
]
DRAFT: dict[str, Any] = {
    "id": 12, "name": "Friday round robin", "owner": "alice", "status": "draft",
    "options": OPTIONS, "rule_set": "single_hand", "table_size": 2, "games_per_pairing": 4,
    "duplicate_deals": True, "turn_timeout_ms": 1000, "max_strikes": 3, "rated": True,
    "entrants": [],
    "progress": {"matches_done": 0, "matches_total": 0, "games_done": 0, "games_total": 0,
                 "matches_dropped": 0, "games_dropped": 0, "eta_seconds": None},
    "created_at": "2026-01-05T10:04:00Z", "started_at": None, "finished_at": None,
}
WITH_ENTRANTS: dict[str, Any] = {**DRAFT, "entrants": _ENTRANTS}
RUNNING: dict[str, Any] = {
    **DRAFT, "status": "running", "entrants": _ENTRANTS,
    "progress": {"matches_done": 0, "matches_total": 1, "games_done": 3, "games_total": 8,
                 "matches_dropped": 0, "games_dropped": 0, "eta_seconds": 4.5},
    "started_at": "2026-01-05T10:10:00Z",
}
FINISHED: dict[str, Any] = {
    **RUNNING, "status": "finished",
    "progress": {"matches_done": 1, "matches_total": 1, "games_done": 8, "games_total": 8,
                 "matches_dropped": 0, "games_dropped": 0, "eta_seconds": None},
    "finished_at": "2026-01-05T10:10:12Z",
}
CANCELLED: dict[str, Any] = {**RUNNING, "status": "cancelled",
                             "progress": {**RUNNING["progress"], "matches_dropped": 1,
                                          "games_dropped": 5, "eta_seconds": None},
                             "finished_at": "2026-01-05T10:10:05Z"}
STANDINGS: dict[str, Any] = {
    "tournament": 12, "status": "finished", "final": True,
    "progress": FINISHED["progress"],
    "standings": [
        {"rank": 1, "bot": 5, "name": "cautious", "games": 8, "wins": 5, "win_rate": 0.625,
         "points": 412, "avg_points_left": 21.5, "strikes": 0, "forfeits": 0,
         "rating": 1544.1, "low": 1421.0, "high": 1690.3},
        {"rank": 2, "bot": 3, "name": "greedy-1", "games": 8, "wins": 3, "win_rate": 0.375,
         "points": 240, "avg_points_left": 37.0, "strikes": 1, "forfeits": 0,
         "rating": 1455.9, "low": 1309.7, "high": 1578.9},
    ],
}
LEADERBOARD_ROW: dict[str, Any] = {
    "rank": 1, "bot": 5, "name": "cautious", "owner": "bob", "verified": True,
    "enabled": True, "rule_set": "official", "elo": 1562.4, "bradley_terry": 1544.1,
    "low": 1421.0, "high": 1690.3, "bradley_terry_tournament": 12,
    "games": 120, "wins": 71, "win_rate": 0.592, "p50_ms": 3.1, "p99_ms": 18.4, "strikes": 2,
}
HISTORY: dict[str, Any] = {
    "bot": 5, "rule_set": "official", "elo": 1516.2, "games": 2,
    "ladders": ["official", "single_hand"],
    "history": [
        {"game": 40, "tournament": 12, "before": 1500.0, "after": 1508.0,
         "at": "2026-01-05T10:10:02Z"},
        {"game": 41, "tournament": 12, "before": 1508.0, "after": 1516.2,
         "at": "2026-01-05T10:10:03Z"},
    ],
    "more": False,
}

TOURNAMENT_GAME: dict[str, Any] = {
    "number": 1, "game": 412, "match": 31, "bots": [5, 8], "winner": 0, "scores": [63, 0],
    "points_left": [0, 63], "strikes": [0, 1], "forfeited": [], "end_reason": "match",
    "rated": True, "finished_at": "2026-01-05T10:05:12Z",
}
