"""Bot request and response bodies. A bot's public profile is what every signed-in user sees;
its owner sees the rest (URL, state, verification) but never the secret again."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from bots.models import Bot, BotCall, CallKind
from core.strict import StrictCharField, StrictInput
from games.serializers import StrictBooleanField


class BotCreateInput(StrictInput):
    name = StrictCharField(max_length=64, allow_blank=True, trim_whitespace=False,
                                 help_text="Unique (case-insensitive): letters, digits, '_', "
                                 "'.', '-'. Seats show it as `bot:<name>`.")
    url = StrictCharField(max_length=2000, help_text="http(s) URL the server POSTs "
                                "turns and notices to (no credentials, no fragment, up to "
                                "2000 characters).")
    description = StrictCharField(max_length=2000, allow_blank=True, required=False,
                                        default="")
    enabled = StrictBooleanField(required=False, default=True)


class BotUpdateInput(StrictInput):
    name = StrictCharField(max_length=64, allow_blank=True, trim_whitespace=False,
                                 required=False)
    url = StrictCharField(max_length=2000, required=False,
                                help_text="A new URL clears the verification.")
    description = StrictCharField(max_length=2000, allow_blank=True, required=False)
    enabled = StrictBooleanField(required=False)


class BotPublicOut(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.get_username", read_only=True)

    class Meta:
        model = Bot
        fields = ("id", "name", "owner", "description", "verified", "created_at")
        read_only_fields = fields


class BotOut(BotPublicOut):
    """The owner's view."""

    class Meta:
        model = Bot
        fields = (*BotPublicOut.Meta.fields, "url", "enabled", "verified_at", "verification",
                  "previous_secret_until", "updated_at")
        read_only_fields = fields


class BotDetailOut(BotPublicOut):
    """A bot: its public fields, and for its owner also the fields that are only theirs."""

    # For the schema only (``GET /api/bots/{id}/``): the owner's fields are optional properties,
    # so that a client generated from it takes the answer to someone else as well.
    updated_at = serializers.DateTimeField(required=False, help_text="Only in the owner's answer.")

    class Meta:
        model = Bot
        fields = BotOut.Meta.fields
        read_only_fields = BotPublicOut.Meta.fields
        # Not read-only, and not required: the schema lists them as optional properties.
        extra_kwargs = {name: {"required": False, "help_text": "Only in the owner's answer."}
                        for name in BotOut.Meta.fields if name not in BotPublicOut.Meta.fields}


class BotCreatedOut(BotOut):
    secret = serializers.CharField(help_text="The signing secret: shown this once only.")

    class Meta:
        model = Bot
        fields = (*BotOut.Meta.fields, "secret")
        read_only_fields = fields


@extend_schema_serializer(deprecate_fields=["previous_valid_until"])
class SecretOut(serializers.Serializer):
    secret = serializers.CharField(help_text="The new signing secret: shown this once only.")
    previous_secret_until = serializers.DateTimeField(
        help_text="Until then, calls carry a signature with the old secret too (the bot's "
        "`previous_secret_until`)."
    )
    previous_valid_until = serializers.DateTimeField(
        help_text="The same time, under its first name (deprecated: read "
        "`previous_secret_until`)."
    )


class LatencyOut(serializers.Serializer):
    p50_ms = serializers.FloatField(allow_null=True)
    p99_ms = serializers.FloatField(allow_null=True)
    window = serializers.IntegerField(help_text="How many recent turn calls they cover.")


class BotStatsOut(serializers.Serializer):
    bot = serializers.IntegerField()
    calls = serializers.IntegerField(help_text="All calls ever made to the bot.")
    failed = serializers.IntegerField()
    latency = LatencyOut()
    errors = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Failed calls by kind, ever.")
    strikes = serializers.DictField(child=serializers.IntegerField(),
                                    help_text="Strikes by reason, ever.")


class BotCallOut(serializers.ModelSerializer):
    game = serializers.IntegerField(source="game_id", allow_null=True)
    kind = serializers.ChoiceField(choices=CallKind.choices)

    class Meta:
        model = BotCall
        fields = ("id", "kind", "game", "version", "seat", "status", "latency_ms", "error",
                  "detail", "outcome", "created_at")
        read_only_fields = fields
        extra_kwargs = {"outcome": {"help_text": (
            "What the server did about a turn call: `move` (the bot's move was played), "
            "`strike` (the default move and a strike), `stale` (the game had moved on: no "
            "move, no strike), `clock` (the turn clock ran out first and played the seat, "
            "with its strike); empty for notices and verification calls.")}}


class VerificationOut(serializers.Serializer):
    bot = serializers.IntegerField()
    verified = serializers.BooleanField()
    result = serializers.ChoiceField(choices=["passed", "failed"])
    reasons = serializers.ListField(child=serializers.CharField(),
                                    help_text="Why it failed (empty when it passed).")
    turns = serializers.IntegerField(help_text="Decisions the bot made in the validation game.")


def stats_data(bot: Bot, counters: dict[str, int], latency: dict[str, Any]) -> dict[str, Any]:
    return {
        "bot": bot.pk,
        "calls": counters.get("calls", 0),
        "failed": counters.get("failed", 0),
        "latency": latency,
        "errors": {k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("error:")},
        "strikes": {k.split(":", 1)[1]: v for k, v in counters.items()
                    if k.startswith("strike:")},
    }
