"""Reads for the API and the commands, shaped as they show them: tournaments with their
entrants, standings lines, the leaderboard's rows and rating histories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404

from arena import selectors
from arena.models import Entrant, Rating, Tournament
from bots.models import Bot


def _tournaments() -> QuerySet[Tournament]:
    entrants = Entrant.objects.select_related("bot__owner").order_by("id")
    return Tournament.objects.select_related("owner").prefetch_related(
        Prefetch("entrants", queryset=entrants)
    ).order_by("-created_at", "-id")


def tournament_get(*, tournament_id: int) -> Tournament:
    tournament = _tournaments().filter(pk=tournament_id).first()
    if tournament is None:
        raise Http404("No such tournament.")
    return tournament


def tournament_list(*, user: AbstractBaseUser | AnonymousUser, mine: bool = False,
                    status: str | None = None) -> QuerySet[Tournament]:
    qs = _tournaments()
    if status:
        qs = qs.filter(status=status)
    if mine:
        qs = qs.filter(Q(owner_id=user.pk) | Q(entrants__bot__owner_id=user.pk)).distinct()
    return qs


def _bt_by_bot(tournament: Tournament) -> dict[int, Mapping[str, Any]]:
    """The finalizer's Bradley-Terry ratings by bot id (empty until finalized)."""
    data: Any = tournament.bradley_terry or {}
    return {int(row["bot"]): row for row in data.get("ratings", [])}


def standings_rows(*, tournament: Tournament) -> list[dict[str, Any]]:
    """Standings lines, best first: the finalizer's table once finalized (with each line's
    Bradley-Terry rating and interval), else computed now from the games recorded so far."""
    lines = selectors.tournament_standings(tournament=tournament)
    bt = _bt_by_bot(tournament)
    return [
        {**line, "rating": bt.get(line["bot"], {}).get("rating"),
         "low": bt.get(line["bot"], {}).get("low"), "high": bt.get(line["bot"], {}).get("high")}
        for line in lines
    ]


def leaderboard_queryset(*, rule_set: str = "official", owner: str | None = None,
                         verified: bool | None = None, active: bool | None = None,
                         search: str | None = None) -> QuerySet[Rating]:
    """The ladder of one rule set, best Elo first, filtered as the admin's leaderboard is."""
    qs = Rating.objects.filter(rule_set=rule_set).select_related("bot__owner")
    if owner is not None:
        qs = qs.filter(bot__owner__username=owner)
    if verified is not None:
        qs = qs.filter(bot__verified=verified)
    if active is not None:
        qs = qs.filter(bot__enabled=active)
    if search:
        qs = qs.filter(bot__name__icontains=search)
    return qs.order_by("-elo", "bot_id")


def leaderboard_rows(ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """``LeaderboardRowOut`` rows of a page of the ladder, ranked on the whole ladder: the
    admin's leaderboard lines (``selectors.leaderboard_lines``) under the API's names."""
    return [_api_row(line) for line in selectors.leaderboard_lines(ratings=ratings)]


def _api_row(line: Mapping[str, Any]) -> dict[str, Any]:
    interval = line["interval"] or {}
    return {
        "rank": line["rank"], "bot": line["bot"], "name": line["name"], "owner": line["owner"],
        "verified": line["verified"], "enabled": line["enabled"], "rule_set": line["rule_set"],
        "elo": line["elo"], "bradley_terry": interval.get("rating"), "low": interval.get("low"),
        "high": interval.get("high"), "bradley_terry_tournament": line["bradley_terry_tournament"],
        "games": line["games"], "wins": line["wins"], "win_rate": line["win_rate"],
        "p50_ms": line["latency_p50_ms"], "p99_ms": line["latency_p99_ms"],
        "strikes": line["strikes"],
    }


def rating_history_data(*, bot: Bot, rule_set: str = "official", limit: int | None = None,
                        before: int | None = None) -> dict[str, Any]:
    """``RatingHistoryOut``: the bot's Elo history on ``rule_set`` (its newest ``limit``
    points, or all; those older than game ``before``'s with it), oldest first, each game with
    its tournament, whether older points were left out, and every ladder the bot is on (so a
    bot unrated here says where it is)."""
    rating = Rating.objects.filter(bot=bot, rule_set=rule_set).first()
    changes, more = selectors.rating_history_newest(bot=bot, rule_set=rule_set, limit=limit,
                                                    before=before)
    return {
        "bot": bot.pk, "rule_set": rule_set,
        "elo": round(rating.elo, 1) if rating else None,
        "games": rating.games if rating else 0,
        "ladders": selectors.bot_ladders(bot=bot),
        "history": [{"game": c.game_id, "tournament": c.tournament_id,
                     "before": round(c.before, 1), "after": round(c.after, 1),
                     "at": c.created_at} for c in changes],
        "more": more,
    }


def elo_of(*, bot_ids: Sequence[int], rule_set: str) -> dict[int, float]:
    return {bot_id: round(elo, 1) for bot_id, elo in Rating.objects.filter(
        bot_id__in=bot_ids, rule_set=rule_set).values_list("bot_id", "elo")}
