"""Bots: HTTP endpoints a user registers, the server calls on each of their seats' turns.

A bot belongs to its owner. Its signing secret is stored as is (it must sign every call) and
never leaves the server after the answer that created or rotated it. The call log is pruned
(``BOTS_CALL_LOG_KEEP`` per bot); the ``BotCounter`` aggregates are kept for good.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class Bot(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    # Letters, digits, "_", "." and "-": a seat shows it as "bot:<name>", which no user name
    # can spell (user names have no colon).
    name = models.CharField(
        max_length=64, validators=[RegexValidator(NAME_PATTERN)],
        help_text="Unique (case-insensitive); letters, digits, '_', '.', '-'.",
    )
    url = models.CharField(max_length=2000, help_text="The endpoint the server POSTs to.")
    description = models.TextField(blank=True, default="", max_length=2000)
    enabled = models.BooleanField(default=True)
    secret = models.CharField(max_length=128, help_text="Signing secret; never shown again.")
    # While a rotation's grace period runs, calls carry a signature with this one too.
    previous_secret = models.CharField(max_length=128, blank=True, default="")
    previous_secret_until = models.DateTimeField(null=True, blank=True)
    # Verification: cleared by any change of URL.
    verified = models.BooleanField(default=False)
    verified_at = models.DateTimeField(null=True, blank=True)
    verification = models.JSONField(
        default=dict, blank=True, help_text="The last verification's result and reasons."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name",)
        constraints = [
            models.UniqueConstraint(Lower("name"), name="bot_unique_name_ci"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        """How a seat it drives names its player."""
        return f"bot:{self.name}"

    @property
    def eligible(self) -> bool:
        """Whether it may enter, and start in, a tournament (``eligible`` is the query)."""
        return self.verified and self.enabled


def eligible(related: str = "") -> Q:
    """``Bot.eligible`` as a query, on bots or (``related``: "bot__") on rows with a bot."""
    return Q(**{f"{related}verified": True, f"{related}enabled": True})


class CallKind(models.TextChoices):
    TURN = "turn", "Turn"
    START = "start", "Game start notice"
    END = "end", "Game end notice"
    VERIFY = "verify", "Verification"


class BotCall(models.Model):
    """One request to a bot, kept for a while (the log is pruned)."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="calls")
    game = models.ForeignKey(
        "games.Game", on_delete=models.SET_NULL, null=True, blank=True, related_name="bot_calls"
    )
    version = models.PositiveIntegerField(null=True, blank=True)
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=8, choices=CallKind.choices)
    status = models.PositiveSmallIntegerField(null=True, blank=True, help_text="HTTP status.")
    # None: no call was made (the bot disabled; no time left on the turn clock). Latency
    # figures (p50/p99) and the ``calls`` count take only the calls made.
    latency_ms = models.FloatField(null=True, blank=True, help_text=(
        "Milliseconds from sending the call to its answer (or its failure); null when no call "
        "was made: the bot disabled, or no time left on the turn clock."))
    # "" when the call succeeded; else a transport error kind, "malformed", "illegal", ...
    error = models.CharField(max_length=24, blank=True, default="")
    detail = models.CharField(max_length=500, blank=True, default="")
    # What the server did about it: "" (nothing to do), "move", "strike", "stale", "clock".
    outcome = models.CharField(max_length=8, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-id",)
        indexes = [models.Index(fields=("bot", "-id"), name="botcall_bot_recent")]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.kind} {self.error or 'ok'}"


class BotCounter(models.Model):
    """A per-bot aggregate kept for good: ``calls``, ``failed``, ``error:<kind>``,
    ``strike:<reason>``. Incremented in place (``F``), so concurrent games never lose a
    count."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="counters")
    name = models.CharField(max_length=40)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ("bot_id", "name")
        constraints = [
            models.UniqueConstraint(fields=("bot", "name"), name="botcounter_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.name}={self.count}"
