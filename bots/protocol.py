"""Protocol 1 as OpenAPI: the bodies the server POSTs to a bot and what it answers, declared as
webhooks (drf-spectacular's ``OpenApiWebhook``), so their schemas are named components a
generator can turn into types (``BotTurn``, ``BotTurnAnswer``, ``BotStartNotice``,
``BotEndNotice``). The API's schema is OpenAPI 3.0, which has no ``webhooks`` section: a
postprocessing hook moves them to ``x-webhooks``, which ReDoc shows as such.

docs/bot-protocol.md is the prose version; ``bots.runner`` builds these bodies.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiRequest,
    OpenApiResponse,
    OpenApiWebhook,
    extend_schema,
)
from rest_framework import serializers

from bots.runner import turn_payload
from games import uno as engine
from games.serializers import EngineViewField, MoveField

_TYPES = {"turn": "A decision is awaited from the bot.", "start": "The game started.",
          "end": "The game ended."}


class LatencyIn(serializers.Serializer):
    p50_ms = serializers.FloatField(allow_null=True)
    p99_ms = serializers.FloatField(allow_null=True)


class _Common(serializers.Serializer):
    protocol = serializers.IntegerField(help_text="Protocol version: 1.")
    # ``type``: each body's own, a one-value enum (a generator can tell the bodies apart by
    # it). It stays inline: drf-spectacular registers a webhook's components after its enum
    # hook has named the others' enums.
    game = serializers.IntegerField(help_text="Game id (0 in a verification game).")
    version = serializers.IntegerField(help_text="Game version the body describes.")
    seat = serializers.IntegerField(help_text="The bot's seat.")
    options = serializers.DictField(help_text="The table's rule options (engine options).")


class BotTurn(_Common):
    type = serializers.ChoiceField(choices=["turn"])
    view = EngineViewField(help_text="The seat's view: what `GET /api/games/{id}/view/` "
                           "shows under `view` (the same function builds it).")
    legal_moves = serializers.ListField(child=MoveField(),
                                        help_text="The moves the bot may answer with (the "
                                        "view's `legal_moves`).")
    budget_ms = serializers.IntegerField(help_text="Time for the whole call, in ms: the "
                                         "server's per-call limit, never more than what is "
                                         "left of the turn clock (less 150 ms) on a live table.")
    latency = LatencyIn(help_text="The bot's own recent latency (both figures null before "
                        "any call).")


class BotTurnAnswer(serializers.Serializer):
    move = MoveField(help_text="One of `legal_moves`, sent back unchanged.")


class BotStartNotice(_Common):
    type = serializers.ChoiceField(choices=["start"])
    players = serializers.ListField(child=serializers.CharField(allow_null=True))


class ResultIn(serializers.Serializer):
    winner = serializers.IntegerField(allow_null=True)
    scores = serializers.ListField(child=serializers.IntegerField())
    end_reason = serializers.CharField()


class BotEndNotice(_Common):
    type = serializers.ChoiceField(choices=["end"])
    result = ResultIn()
    replay = serializers.DictField(
        allow_null=True,
        help_text="The game's replay, as `GET /api/games/{id}/replay/` serves it; null while "
        "it is held: a tournament's games open when the tournament ends (they share deals).")


# The Standard Webhooks headers every call carries (``bots.signing.headers_for``), as OpenAPI
# header parameters. Raw objects that ``webhooks_as_extension`` puts on every webhook:
# drf-spectacular builds a webhook's body and responses but drops its ``parameters``.
_BASE64_HMAC = "[A-Za-z0-9+/]{43}="  # the 32 bytes of an HMAC-SHA256
SIGNATURE_HEADERS: list[dict[str, Any]] = [
    {"name": "webhook-id", "in": "header", "required": True,
     "schema": {"type": "string", "pattern": "^msg_[0-9a-f]{32}$"},
     "example": "msg_2b8c1e0f6a9d4c7e8f1a2b3c4d5e6f70",
     "description": "Unique per call (`msg_` and 32 hex digits). A call sent once more on a "
     "new connection (the kept-alive one failed before any answer) is the same bytes with "
     "the same id: de-duplicate on it."},
    {"name": "webhook-timestamp", "in": "header", "required": True,
     "schema": {"type": "integer", "format": "int64", "minimum": 0},
     "example": 1767607200,
     "description": "When the call was signed, in unix seconds (decimal digits). Refuse a "
     "call more than 5 minutes off your clock with 401: a replayed call."},
    {"name": "webhook-signature", "in": "header", "required": True,
     "schema": {"type": "string",
                "pattern": f"^v1,{_BASE64_HMAC}( v1,{_BASE64_HMAC})?$"},
     "example": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
     "description": "Space-separated `v1,<base64 HMAC-SHA256>` of `{id}.{timestamp}.{body}` "
     "(the key: the base64-decoded part of your secret after `whsec_`), one per valid "
     "secret: two during a rotation's grace period. Accept the call if any one matches a "
     "secret you hold; refuse it with 401 if none does."},
]
_REFUSED = OpenApiResponse(description="What the bot must answer (any 4xx will do) to a call "
                           "whose signature is missing, matches none of its secrets or is "
                           "more than 5 minutes old: verification sends such calls and fails "
                           "a bot that accepts one. A real call, correctly signed, answered "
                           "so is a failed call (`status`).")


def _turn_example() -> dict[str, Any]:
    """A real turn's body, as ``bots.runner`` builds it: table 7, a two-seat single hand dealt
    from seed 8, just started (version 3: two joins and the start), seat 1 to play on a red
    three (R2, R7 or draw)."""
    options = engine.Options(players=2, single_hand=True)
    state = engine.new_game(options, 8)
    seat = state.awaiting
    assert seat is not None
    return turn_payload(game_id=7, version=3, options=options.to_json(), seat=seat,
                        view=engine.view(state, seat), budget=1000,
                        latency={"p50_ms": 4.2, "p99_ms": 31.8})


TURN_EXAMPLE = _turn_example()
ANSWER_EXAMPLE = {"move": {"type": "play", "card": "R7"}}


def _notice(kind: str, body: type[serializers.Serializer]) -> OpenApiWebhook:
    return OpenApiWebhook(
        name=f"bot_{kind}",
        decorator=extend_schema(
            summary=f"Bot protocol 1: {kind}",
            description=_TYPES[kind] + " A notice needs only a 2xx; a failed notice never "
            "costs a strike.",
            request=body,
            responses={204: OpenApiResponse(description="Received (any 2xx)."),
                       401: _REFUSED},
        ),
    )


TURN_WEBHOOK = OpenApiWebhook(
    name="bot_turn",
    decorator=extend_schema(
        summary="Bot protocol 1: turn",
        description="POSTed to the bot's URL when its seat must decide. Answer 200 with "
        "`{\"move\": ...}` (one of `legal_moves`) within `budget_ms`. Anything else (no "
        "answer in time, a non-2xx or redirect, not JSON, too big, not a move, an illegal "
        "move) makes the server play the seat's default move and strike it.",
        # Each example beside its own body: drf-spectacular builds a webhook from the bot's
        # side (its request is what the bot answers), so an operation-wide "request_only"
        # example lands on the answer.
        request=OpenApiRequest(BotTurn, examples=[OpenApiExample("A turn", TURN_EXAMPLE)]),
        responses={
            200: OpenApiResponse(
                BotTurnAnswer, "The bot's move.",
                examples=[OpenApiExample("Play the red seven", ANSWER_EXAMPLE)],
            ),
            401: _REFUSED,
        },
    ),
)
START_WEBHOOK = _notice("start", BotStartNotice)
END_WEBHOOK = _notice("end", BotEndNotice)


def webhooks_as_extension(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: OpenAPI 3.0 has no ``webhooks``; keep them as
    ``x-webhooks`` (their schemas stay named components), each call with its signature
    headers."""
    webhooks = result.pop("webhooks", None)
    if webhooks:
        for operations in webhooks.values():
            for operation in operations.values():
                operation["parameters"] = [dict(header) for header in SIGNATURE_HEADERS]
        result["x-webhooks"] = webhooks
    return result
