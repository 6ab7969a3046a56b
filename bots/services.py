"""Everything that changes a bot: registration, edits, secrets, the call log and its
aggregates, and the check that lets a user seat a bot (registered into ``games.hooks``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, ProtectedError
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from bots import guard, signing
from bots.errors import BotDisabled, BotEntered, BotSeated, NotBotOwner
from bots.models import NAME_PATTERN, Bot, BotCall, BotCounter
from games import rows as game_rows

NAME_TAKEN = "A bot with that name already exists."
_NAME = re.compile(NAME_PATTERN)
# Turn calls kept per bot; older ones are pruned now and then (``call_record``).
CALL_LOG_KEEP = 500
_PRUNE_EVERY = 64


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


# --- registration ------------------------------------------------------------------------------
def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": ["A name is required."]})
    if not _NAME.fullmatch(name):
        raise ValidationError({"name": [
            "Use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit."
        ]})
    return name


def _clean_url(url: str) -> str:
    """The URL's syntax, and an IP typed in it that no setting lets a bot call (the metadata
    service, unspecified, multicast...): refused now, not at every call. A name is resolved
    only when called (its addresses may change), loopback and private ones by the setting."""
    try:
        guard.check_url(url)
        parts = urlsplit(url)
        if settings.BOTS_REQUIRE_HTTPS and parts.scheme.lower() != "https":
            raise ValidationError({"url": [
                "This server takes https:// bot URLs only (BOTS_REQUIRE_HTTPS): over plain "
                "http anyone on the way could read your bot's hand and answer in its place."]})
        literal = guard.parse_ip(parts.hostname or "")
        if literal is not None:
            guard.check_ip(str(literal), allow_private=True)
    except guard.BadBotUrl as exc:
        raise ValidationError({"url": [exc.reason]}) from None
    except guard.BlockedAddress as exc:
        raise ValidationError({"url": [f"Bots may not live there: {exc.reason}."]}) from None
    return url


def _name_free(name: str, *, exclude: int | None = None) -> None:
    clash = Bot.objects.filter(name__iexact=name)
    if exclude is not None:
        clash = clash.exclude(pk=exclude)
    if clash.exists():
        raise ValidationError({"name": [NAME_TAKEN]})


def _save_unique(bot: Bot) -> None:
    """Save; a name taken between the check and the insert is a 400 too, not a 500."""
    try:
        with transaction.atomic():  # a savepoint: the rest of the transaction survives
            bot.save()
    except IntegrityError:
        raise ValidationError({"name": [NAME_TAKEN]}) from None


@transaction.atomic
def bot_create(
    *, owner: AbstractBaseUser, name: str, url: str, description: str = "", enabled: bool = True
) -> tuple[Bot, str]:
    """A new bot and its signing secret (the only time the secret is returned)."""
    name, url = _clean_name(name), _clean_url(url)
    _name_free(name)
    secret = signing.new_secret()
    bot = Bot(owner=owner, name=name, url=url, description=description, enabled=enabled,
              secret=secret)
    _save_unique(bot)
    return bot, secret


@transaction.atomic
def bot_update(*, bot: Bot, data: Mapping[str, Any]) -> Bot:
    """Change name, url, description or enabled. A new URL clears the verification."""
    bot = Bot.objects.select_for_update().get(pk=bot.pk)
    if "name" in data:
        bot.name = _clean_name(data["name"])
        _name_free(bot.name, exclude=bot.pk)
    if "url" in data:
        url = _clean_url(data["url"])
        if url != bot.url:
            bot.url = url
            bot.verified, bot.verified_at = False, None
            bot.verification = {"result": "cleared", "reasons": ["The URL changed."]}
    if "description" in data:
        bot.description = data["description"]
    if "enabled" in data:
        bot.enabled = bool(data["enabled"])
    _save_unique(bot)
    return bot


@transaction.atomic
def bot_rotate_secret(*, bot: Bot) -> str:
    """A new secret; the old one stays valid for the grace period (calls are signed with
    both meanwhile, as Standard Webhooks allows)."""
    bot = Bot.objects.select_for_update().get(pk=bot.pk)
    grace = timedelta(hours=_setting("BOTS_SECRET_GRACE_HOURS", 24))
    bot.previous_secret, bot.previous_secret_until = bot.secret, timezone.now() + grace
    bot.secret = signing.new_secret()
    bot.save(update_fields=["secret", "previous_secret", "previous_secret_until", "updated_at"])
    return bot.secret


@transaction.atomic
def bot_delete(*, bot: Bot) -> None:
    """Delete a bot with no record: one that never took a seat (``BotSeated``) and is entered
    in no tournament (``BotEntered``). Its seats and entries protect it: the delete itself
    refuses, so a seat taken meanwhile cannot slip past a check made before it."""
    from games.models import Seat

    try:
        with transaction.atomic():
            bot.delete()
    except ProtectedError as error:  # seats, or (the arena's) tournament entries
        if any(isinstance(row, Seat) for row in error.protected_objects):
            raise BotSeated() from error
        raise BotEntered() from error


def signing_secrets(bot: Bot) -> list[str]:
    """The secrets a call is signed with: the current one, and the previous one while its
    grace period lasts."""
    out = [bot.secret]
    if bot.previous_secret and bot.previous_secret_until and (
        bot.previous_secret_until > timezone.now()
    ):
        out.append(bot.previous_secret)
    return out


@transaction.atomic
def verification_record(*, bot_id: int, url: str, ok: bool, reasons: list[str],
                        details: Mapping[str, Any]) -> None:
    """Store a verification's result, unless the URL changed while it ran."""
    bot = Bot.objects.select_for_update().get(pk=bot_id)
    if bot.url != url:
        return
    bot.verified = ok
    bot.verified_at = timezone.now() if ok else None
    bot.verification = {
        "result": "passed" if ok else "failed", "reasons": reasons,
        "checked_at": timezone.now().isoformat(), **details,
    }
    bot.save(update_fields=["verified", "verified_at", "verification", "updated_at"])


# --- seats -------------------------------------------------------------------------------------
def seat_check(user: AbstractBaseUser, bot_id: int) -> None:
    """May ``user`` seat (or unseat) bot ``bot_id``? Its owner only, and only enabled."""
    bot = Bot.objects.filter(pk=bot_id).only("owner_id", "enabled").first()
    if bot is None:
        raise ValidationError({"bot": ["No such bot."]})
    if bot.owner_id != user.pk:
        raise NotBotOwner()
    if not bot.enabled:
        raise BotDisabled()


# --- the call log ------------------------------------------------------------------------------
def _bump(bot_id: int, names: list[str], *, by: int = 1) -> None:
    # In (bot, name) order, as calls_record bumps many bots' counters: the same order in every
    # transaction, or two that bump the same counters in turn wait on each other (a deadlock).
    for name in sorted(names):
        counter = BotCounter.objects.filter(bot_id=bot_id, name=name)
        if not counter.update(count=F("count") + by):
            try:
                with transaction.atomic():
                    BotCounter.objects.create(bot_id=bot_id, name=name, count=by)
            except IntegrityError:  # created meanwhile by another call
                counter.update(count=F("count") + by)


# The call log's outcome when the turn clock played the seat before the bot's answer could be
# (``bots.runner.CLOCK``): its strike is counted under this reason, whatever the call's error.
CLOCK_OUTCOME = "clock"


def _counted(*, error: str, outcome: str, strike: bool, called: bool) -> list[str]:
    """The counters a call adds to: ``calls`` (one made: not a decision logged without a call,
    ``called`` False); ``failed`` and ``error:<kind>`` for a failed one; ``strike:<reason>`` for
    one that cost a strike (the clock's: ``strike:clock``)."""
    names = ["calls"] if called else []
    if error:
        names += ["failed", f"error:{error}"]
    if strike:
        names.append(f"strike:{CLOCK_OUTCOME if outcome == CLOCK_OUTCOME else error}")
    return names


def call_record(
    *,
    bot_id: int,
    kind: str,
    latency_ms: float | None,
    status: int | None,
    error: str = "",
    detail: str = "",
    outcome: str = "",
    game_id: int | None = None,
    version: int | None = None,
    seat: int | None = None,
    strike: bool = False,
) -> BotCall:
    """Log one call and count it. A strike is counted under its reason (the error kind, or
    ``clock`` when the turn clock gave it: ``outcome`` "clock")."""
    call = BotCall.objects.create(
        bot_id=bot_id, game_id=game_id, version=version, seat=seat, kind=kind, status=status,
        latency_ms=latency_ms, error=error, detail=detail[:500], outcome=outcome,
    )
    _bump(bot_id, _counted(error=error, outcome=outcome, strike=strike,
                           called=latency_ms is not None))
    if call.pk % _PRUNE_EVERY == 0:
        call_log_prune(bot_id=bot_id)
    return call


def call_log_prune(*, bot_id: int, keep: int | None = None) -> int:
    """Drop all but the newest ``keep`` calls of a bot; how many went."""
    keep = keep or _setting("BOTS_CALL_LOG_KEEP", CALL_LOG_KEEP)
    edge = list(BotCall.objects.filter(bot_id=bot_id).order_by("-id")
                .values_list("id", flat=True)[keep:keep + 1])
    if not edge:
        return 0
    deleted, _ = BotCall.objects.filter(bot_id=bot_id, id__lte=edge[0]).delete()
    return deleted


@transaction.atomic
def calls_record(calls: list[dict[str, Any]]) -> None:
    """``call_record`` for many calls at once (a driven game's batch): one insert, and one
    update per counter, in one transaction (one commit, not one per statement)."""
    if not calls:
        return
    counts: dict[tuple[int, str], int] = {}
    rows = []
    for call in calls:
        detail = call.get("detail")
        if detail and len(detail) > 500:
            call = {**call, "detail": detail[:500]}
        rows.append(call)  # its other keys ("strike") are no column: the insert skips them
        bot_id = call["bot_id"]
        for name in _counted(error=call.get("error") or "", outcome=call.get("outcome") or "",
                             strike=bool(call.get("strike")),
                             called=call.get("latency_ms") is not None):
            counts[bot_id, name] = counts.get((bot_id, name), 0) + 1
    game_rows.insert_many(BotCall, rows)  # one statement, without the ORM's compiling
    # Locks taken in (bot, name) order: two matches sharing bots, flushing their calls in
    # opposite orders, deadlocked on PostgreSQL (the loser's match task failed).
    for (bot_id, name), count in sorted(counts.items()):
        _bump(bot_id, [name], by=count)
    for bot_id in sorted({call["bot_id"] for call in calls}):
        call_log_prune(bot_id=bot_id)
