"""Reads about bots: public profiles for everyone signed in; the rest for the owner only."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection
from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import Http404

from bots.errors import NotBotOwner
from bots.models import Bot, BotCall, BotCounter, CallKind
from bots.runner import percentiles
from games import rows
from games.models import Game, Seat

LATENCY_WINDOW = 500


def bot_list(*, mine: bool = False, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Bot]:
    qs = Bot.objects.select_related("owner").order_by("name", "id")
    return qs.filter(owner_id=user.pk) if mine else qs


def bot_get(*, bot_id: int) -> Bot:
    bot = Bot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None:
        raise Http404("No such bot.")
    return bot


def bot_owned(*, bot_id: int, user: AbstractBaseUser | AnonymousUser) -> Bot:
    """The bot if ``user`` owns it: 404 without such a bot, 403 for anyone else's."""
    bot = bot_get(bot_id=bot_id)
    if bot.owner_id != user.pk:
        raise NotBotOwner()
    return bot


def owns_a_seated_bot(game: Game, user: AbstractBaseUser) -> bool:
    """Whether one of ``user``'s bots sits at ``game`` (``games.hooks``' replay reader: a bot's
    owner reads the replays of its games, as its players would)."""
    return Seat.objects.filter(game=game, bot__owner_id=user.pk).exists()


def counters(*, bot: Bot) -> dict[str, int]:
    return dict(BotCounter.objects.filter(bot=bot).values_list("name", "count"))


def latency(*, bot: Bot, window: int = LATENCY_WINDOW) -> dict[str, Any]:
    """p50/p99 of the bot's recent turn calls (from the log, which keeps the newest)."""
    newest = (BotCall.objects.filter(bot=bot, kind=CallKind.TURN).order_by("-id")
              .values_list("latency_ms", flat=True)[:window])
    values = sorted(v for v in newest if v is not None)  # None: not called
    return {**percentiles(values), "window": len(values)}


def latencies(*, bot_ids: Collection[int], window: int = LATENCY_WINDOW
              ) -> dict[int, dict[str, Any]]:
    """``latency`` of many bots (a leaderboard page's) in one query, the same numbers. Every
    bot asked for has an entry (``p50_ms``/``p99_ms`` None without calls)."""
    ids = list(dict.fromkeys(bot_ids))
    if not ids:
        return {}
    if connection.vendor == "postgresql":
        return _latencies_in_database(ids, window)
    return _latencies_here(ids, window)


def _latencies_in_database(bot_ids: list[int], window: int) -> dict[int, dict[str, Any]]:
    """The database picks the percentiles (``games.rows.newest_percentiles``: one ``LATERAL``
    read of each bot's newest calls)."""
    found = rows.newest_percentiles(
        BotCall, group="bot", groups=bot_ids, value="latency_ms", where=("kind", CallKind.TURN),
        window=window, fractions=(0.5, 0.99))
    return {bot_id: {"p50_ms": None if p50 is None else round(p50, 2),
                     "p99_ms": None if p99 is None else round(p99, 2), "window": n}
            for bot_id, (n, (p50, p99)) in found.items()}


def _latencies_here(bot_ids: list[int], window: int) -> dict[int, dict[str, Any]]:
    """Each bot's newest ``window`` turn calls, numbered per bot by a window function; their
    percentiles taken here (SQLite, the embedded default, has no ``percentile_disc``)."""
    newest = Window(RowNumber(), partition_by=F("bot_id"), order_by=F("id").desc())
    calls = (BotCall.objects.filter(bot_id__in=bot_ids, kind=CallKind.TURN)
             .annotate(newness=newest).filter(newness__lte=window)
             .values_list("bot_id", "latency_ms"))
    values: dict[int, list[float]] = {bot_id: [] for bot_id in bot_ids}
    for bot_id, latency_ms in calls:
        if latency_ms is not None:  # None: not called
            values[bot_id].append(latency_ms)
    return {bot_id: {**percentiles(sorted(found)), "window": len(found)}
            for bot_id, found in values.items()}


def call_list(*, bot: Bot) -> QuerySet[BotCall]:
    return BotCall.objects.filter(bot=bot).order_by("-id")
