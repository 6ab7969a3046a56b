"""Reads of tournaments and ratings: progress, standings, the leaderboard, rating histories."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet, Sum

from arena import services
from arena.models import Rating, RatingChange, Tournament, TournamentStatus
from arena.ratings import OFFICIAL
from bots import selectors as bot_selectors
from bots.models import Bot, BotCounter
from games.models import Seat


def tournament_progress(*, tournament: Tournament) -> dict[str, Any]:
    """Matches and games done out of the totals, the fraction done, and the time left
    (estimated from the time per game so far; None before the first game or once over)."""
    total = tournament.games_total
    return {
        "status": tournament.status,
        "matches_done": tournament.matches_done,
        "matches_total": tournament.matches_total,
        "games_done": tournament.games_done,
        "games_total": total,
        "fraction": round(tournament.games_done / total, 4) if total else 0.0,
        "eta_seconds": tournament.eta_seconds,
        "started_at": tournament.started_at,
        "finished_at": tournament.finished_at,
    }


def tournament_standings(*, tournament: Tournament) -> list[dict[str, Any]]:
    """The final table once finalized; while running, the table of the games recorded so far
    (computed on read, from the stored results)."""
    if tournament.finalized_at is not None:
        return list(tournament.standings)
    if tournament.status == TournamentStatus.DRAFT:
        return services.standings_rows(tournament, [])
    return services.standings_rows(tournament, services.tournament_results(tournament))


def tournament_bradley_terry(*, tournament: Tournament) -> dict[str, Any]:
    """The finalizer's ratings with intervals, or (not finalized) a fit of the games so far."""
    if tournament.finalized_at is not None:
        return dict(tournament.bradley_terry)
    return services.bradley_terry_json(tournament, services.tournament_results(tournament))


def _latest_intervals(rule_set: str) -> dict[int, tuple[float | None, float | None]]:
    """Each bot's Bradley-Terry interval from the latest finalized tournament it played on
    this rule set."""
    out: dict[int, tuple[float | None, float | None]] = {}
    finalized = Tournament.objects.filter(rule_set=rule_set, finalized_at__isnull=False)
    for tournament in finalized.order_by("-finalized_at", "-id").only("bradley_terry")[:50]:
        for row in (tournament.bradley_terry or {}).get("ratings", []):
            out.setdefault(row["bot"], (row.get("low"), row.get("high")))
    return out


def leaderboard(*, rule_set: str = OFFICIAL) -> list[dict[str, Any]]:
    """Every rated bot on ``rule_set``, best Elo first: its Elo, Bradley-Terry interval (from
    the latest tournament it played, or None), games, wins, win rate, turn latency p50/p99 and
    strikes (all its games)."""
    ratings = list(Rating.objects.filter(rule_set=rule_set).select_related("bot", "bot__owner")
                   .order_by("-elo", "bot_id"))
    intervals = _latest_intervals(rule_set)
    bots = [r.bot_id for r in ratings]
    strikes = dict(Seat.objects.filter(bot_id__in=bots).values("bot_id")
                   .annotate(n=Sum("strikes")).values_list("bot_id", "n"))
    rows = []
    for position, rating in enumerate(ratings, start=1):
        low, high = intervals.get(rating.bot_id, (None, None))
        latency = bot_selectors.latency(bot=rating.bot)
        rows.append({
            "rank": position, "bot": rating.bot_id, "name": rating.bot.name,
            "owner": rating.bot.owner.get_username(), "verified": rating.bot.verified,
            "enabled": rating.bot.enabled, "rule_set": rule_set, "elo": round(rating.elo, 1),
            "interval": None if low is None else {"low": low, "high": high},
            "games": rating.games, "wins": rating.wins,
            "win_rate": round(rating.wins / rating.games, 4) if rating.games else 0.0,
            "latency_p50_ms": latency["p50_ms"], "latency_p99_ms": latency["p99_ms"],
            "strikes": int(strikes.get(rating.bot_id) or 0),
        })
    return rows


def rating_history(*, bot: Bot, rule_set: str = OFFICIAL) -> QuerySet[RatingChange]:
    """The bot's Elo on ``rule_set``, game by game, in the order it was updated."""
    return RatingChange.objects.filter(rating__bot=bot, rating__rule_set=rule_set).order_by("id")


def rule_sets() -> list[str]:
    """The rule sets anyone is rated on, the official one first."""
    found = set(Rating.objects.values_list("rule_set", flat=True).distinct())
    return sorted(found, key=lambda name: (name != OFFICIAL, name))


def strike_counters(*, bot: Bot) -> int:
    """Strikes counted by the bots app (every table, tournament or not)."""
    return int(BotCounter.objects.filter(bot=bot, name__startswith="strike:")
               .aggregate(n=Sum("count"))["n"] or 0)
