"""The API's and the commands' rows, shaped from ``arena.selectors``' reads: tournaments with
their entrants, standings lines, leaderboard rows and rating histories."""

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
    rows = data.get("ratings", data) if isinstance(data, Mapping) else data
    out: dict[int, Mapping[str, Any]] = {}
    if isinstance(rows, Mapping):
        for key, row in rows.items():
            if isinstance(row, Mapping):
                out[int(row.get("bot", key))] = row
    elif isinstance(rows, Sequence):
        for row in rows:
            if isinstance(row, Mapping) and "bot" in row:
                out[int(row["bot"])] = row
    return out


def _num(row: Mapping[str, Any], *names: str, default: Any = 0) -> Any:
    for name in names:
        if row.get(name) is not None:
            return row[name]
    return default


def standings_rows(*, tournament: Tournament) -> list[dict[str, Any]]:
    """``StandingOut`` lines, best first, with the Bradley-Terry rating once finalized."""
    lines = selectors.tournament_standings(tournament=tournament)
    bt = _bt_by_bot(tournament)
    ids = [int(_num(line, "bot", "bot_id")) for line in lines]
    names = dict(Bot.objects.filter(pk__in=ids).values_list("id", "name"))
    out = []
    for rank, (bot_id, line) in enumerate(zip(ids, lines, strict=True), start=1):
        rating = bt.get(bot_id, {})
        games = int(_num(line, "games"))
        out.append({
            "rank": rank, "bot": bot_id, "name": names.get(bot_id, line.get("name", "?")),
            "games": games, "wins": int(_num(line, "wins")),
            "win_rate": float(_num(line, "win_rate")),
            "points": int(_num(line, "points")),
            "avg_points_left": float(_num(line, "avg_points_left")),
            "strikes": int(_num(line, "strikes")), "forfeits": int(_num(line, "forfeits")),
            "rating": _num(rating, "rating", default=None),
            "low": _num(rating, "low", default=None), "high": _num(rating, "high", default=None),
        })
    return out


def leaderboard_rows(*, rule_set: str = "official", owner: str | None = None,
                     verified: bool | None = None, active: bool | None = None,
                     search: str | None = None) -> list[dict[str, Any]]:
    rows = list(selectors.leaderboard(rule_set=rule_set))
    out = []
    for row in rows:
        get = row.get if isinstance(row, Mapping) else (lambda k, d=None, r=row: getattr(r, k, d))
        bot = get("bot")
        if not isinstance(bot, Bot):
            bot = Bot.objects.select_related("owner").get(pk=get("bot_id") or bot)
        if owner is not None and bot.owner.get_username() != owner:
            continue
        if verified is not None and bot.verified != verified:
            continue
        if active is not None and bot.enabled != active:
            continue
        if search and search.lower() not in bot.name.lower():
            continue
        interval = get("interval") or (get("low"), get("high"))
        low, high = (interval[0], interval[1]) if interval else (None, None)
        games = int(get("games") or 0)
        wins = int(get("wins") or 0)
        out.append({
            "rank": len(out) + 1, "bot": bot.pk, "name": bot.name,
            "owner": bot.owner.get_username(), "verified": bot.verified,
            "enabled": bot.enabled, "rule_set": rule_set, "elo": round(float(get("elo")), 1),
            "low": low, "high": high, "games": games, "wins": wins,
            "win_rate": float(get("win_rate") if get("win_rate") is not None
                              else (wins / games if games else 0.0)),
            "p50_ms": get("p50_ms", get("latency_p50")), "p99_ms": get("p99_ms",
                                                                    get("latency_p99")),
            "strikes": int(get("strikes") or 0),
        })
    return out


def rating_history_data(*, bot: Bot, rule_set: str = "official") -> dict[str, Any]:
    rating = Rating.objects.filter(bot=bot, rule_set=rule_set).first()
    changes = selectors.rating_history(bot=bot, rule_set=rule_set)
    return {
        "bot": bot.pk, "rule_set": rule_set,
        "elo": round(rating.elo, 1) if rating else None,
        "games": rating.games if rating else 0,
        "history": [{"game": c.game_id, "before": round(c.before, 1),
                     "after": round(c.after, 1), "at": c.created_at} for c in changes],
    }


def elo_of(*, bot_ids: Sequence[int], rule_set: str) -> dict[int, float]:
    return {bot_id: round(elo, 1) for bot_id, elo in Rating.objects.filter(
        bot_id__in=bot_ids, rule_set=rule_set).values_list("bot_id", "elo")}
