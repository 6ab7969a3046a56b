"""The schema of ``GET /api/stream/``'s events (``games.stream`` builds them): one component
per event type, and their union ``StreamEvent`` keyed by ``type``. Schema-only declarations,
like ``games.schema``; ``tests/games/test_stream_schema.py`` validates real streamed events
against them, closed."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, PolymorphicProxySerializer
from rest_framework import serializers

from games import examples
from games.models import GameStatus
from games.schema import END_REASONS, Discriminator, _seat
from games.serializers import EngineViewField

EVENT_ID_HELP = (
    "The stream's cursor after this event: reconnect with `since` (or `Last-Event-ID`) set "
    "to the last one you got."
)


# An event id, and so the ``since`` / ``Last-Event-ID`` a stream resumes from.
CURSOR_PATTERN = r"^[0-9]+-[0-9]+$"


def _id() -> serializers.CharField:
    return serializers.RegexField(CURSOR_PATTERN, help_text=EVENT_ID_HELP)


class StreamStarted(serializers.Serializer):
    id = _id()
    type = Discriminator("started")
    game = serializers.IntegerField()
    version = serializers.IntegerField(min_value=1)
    players = serializers.ListField(child=serializers.CharField(allow_null=True))


class StreamTurn(serializers.Serializer):
    """Your seat is awaited: the body of `GET /api/games/{id}/view/`, plus `id` and `type`."""

    id = _id()
    type = Discriminator("turn")
    game = serializers.IntegerField()
    version = serializers.IntegerField(help_text="Send this with your move.")
    seat = serializers.IntegerField()
    status = serializers.ChoiceField(choices=GameStatus.choices)
    turn_deadline = serializers.DateTimeField(allow_null=True)
    view = EngineViewField(help_text="Your view, as `view/` gives it.")


class StreamStrike(serializers.Serializer):
    id = _id()
    type = Discriminator("strike")
    game = serializers.IntegerField()
    version = serializers.IntegerField(min_value=1)
    seat = _seat()
    strikes = serializers.IntegerField(min_value=1)
    max_strikes = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(required=False, help_text="Why, when not the clock.")


class StreamForfeited(serializers.Serializer):
    id = _id()
    type = Discriminator("forfeited")
    game = serializers.IntegerField()
    version = serializers.IntegerField(min_value=1)
    seat = _seat()
    reason = serializers.CharField(
        required=False, help_text="`strikes`, `disabled` or `unresponsive` (the event's).")


class StreamEnded(serializers.Serializer):
    id = _id()
    type = Discriminator("ended")
    game = serializers.IntegerField()
    version = serializers.IntegerField(min_value=1)
    status = serializers.ChoiceField(choices=[GameStatus.FINISHED, GameStatus.ABORTED])
    reason = serializers.ChoiceField(choices=END_REASONS)
    winner = _seat(allow_null=True)
    scores = serializers.ListField(child=serializers.IntegerField())


class StreamHeartbeat(serializers.Serializer):
    """Sent on a quiet stream now and then, with the cursor as it stands (SSE sends a comment
    and an `id:` line): resuming from it misses nothing, before your first event too."""

    id = _id()
    type = Discriminator("heartbeat")


STREAM_EVENT_TYPES: list[type[serializers.Serializer]] = [
    StreamStarted, StreamTurn, StreamStrike, StreamForfeited, StreamEnded, StreamHeartbeat,
]

StreamEventSchema = PolymorphicProxySerializer(
    component_name="StreamEvent",
    serializers={e._declared_fields["type"].choices_value: e for e in STREAM_EVENT_TYPES},
    resource_type_field_name="type",
)


def _example(name: str, value: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(name, value=value, response_only=True)


STREAM_EXAMPLES = [
    _example("started", {"id": "5407-81", "type": "started", "game": 7, "version": 3,
                         "players": ["alice", "rival"]}),
    _example("turn", {"id": "5407-81", "type": "turn", **examples.VIEW_EXAMPLE}),
    _example("strike", {"id": "5431-90", "type": "strike", "game": 7, "version": 15,
                        "seat": 1, "strikes": 1, "max_strikes": 3}),
    _example("ended", {"id": "5502-97", "type": "ended", "game": 7, "version": 40,
                       "status": "finished", "reason": "match", "winner": 0,
                       "scores": [112, 0]}),
    _example("heartbeat", {"id": "5502-97", "type": "heartbeat"}),
]
