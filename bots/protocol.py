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
    OpenApiParameter,
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
    type = serializers.ChoiceField(choices=list(_TYPES))
    game = serializers.IntegerField(help_text="Game id (0 in a verification game).")
    version = serializers.IntegerField(help_text="Game version the body describes.")
    seat = serializers.IntegerField(help_text="The bot's seat.")
    options = serializers.DictField(help_text="The table's rule options (engine options).")


class BotTurn(_Common):
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
    players = serializers.ListField(child=serializers.CharField(allow_null=True))


class ResultIn(serializers.Serializer):
    winner = serializers.IntegerField(allow_null=True)
    scores = serializers.ListField(child=serializers.IntegerField())
    end_reason = serializers.CharField()


class BotEndNotice(_Common):
    result = ResultIn()
    replay = serializers.DictField(
        allow_null=True,
        help_text="The game's replay, as `GET /api/games/{id}/replay/` serves it; null while "
        "it is held: a tournament's games open when the tournament ends (they share deals).")


_HEADERS = [
    OpenApiParameter("webhook-id", str, OpenApiParameter.HEADER, required=True,
                     description="Unique per call (`msg_<hex>`). A call sent once more on "
                     "a new connection (the kept-alive one failed before any answer) is the "
                     "same bytes with the same id: de-duplicate on it."),
    OpenApiParameter("webhook-timestamp", str, OpenApiParameter.HEADER, required=True,
                     description="Unix seconds; refuse calls more than 5 minutes off."),
    OpenApiParameter("webhook-signature", str, OpenApiParameter.HEADER, required=True,
                     description="Space-separated `v1,<base64 HMAC-SHA256>` of "
                     "`{id}.{timestamp}.{body}`, one per valid secret (two during a "
                     "rotation's grace period): accept the call if any one matches."),
]

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
            parameters=_HEADERS,
            request=body,
            responses={204: OpenApiResponse(description="Received (any 2xx).")},
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
        parameters=_HEADERS,
        # Each example beside its own body: drf-spectacular builds a webhook from the bot's
        # side (its request is what the bot answers), so an operation-wide "request_only"
        # example lands on the answer.
        request=OpenApiRequest(BotTurn, examples=[OpenApiExample("A turn", TURN_EXAMPLE)]),
        responses={200: OpenApiResponse(
            BotTurnAnswer, "The bot's move.",
            examples=[OpenApiExample("Play the red seven", ANSWER_EXAMPLE)],
        )},
    ),
)
START_WEBHOOK = _notice("start", BotStartNotice)
END_WEBHOOK = _notice("end", BotEndNotice)


def webhooks_as_extension(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: OpenAPI 3.0 has no ``webhooks``; keep them as
    ``x-webhooks`` (their schemas stay named components)."""
    webhooks = result.pop("webhooks", None)
    if webhooks:
        result["x-webhooks"] = webhooks
    return result
