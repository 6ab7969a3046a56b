"""Reads about bots: public profiles for everyone signed in; the rest for the owner only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from bots.errors import NotBotOwner
from bots.models import Bot, BotCall, BotCounter, CallKind
from bots.runner import percentiles
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
    values = sorted(BotCall.objects.filter(bot=bot, kind=CallKind.TURN).order_by("-id")
                    .values_list("latency_ms", flat=True)[:window])
    return {**percentiles(values), "window": len(values)}


def call_list(*, bot: Bot) -> QuerySet[BotCall]:
    return BotCall.objects.filter(bot=bot).order_by("-id")
