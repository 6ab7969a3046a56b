"""The games API's JSON as the OpenAPI schema describes it: schema-only declarations.

The engine's JSON (a seat's view, a replay's full states, moves, rule options) and the event
log are built by plain code at run time (the move path never runs a serializer); the classes
here only describe that JSON, field by field, so a generated client gets typed models and
enums instead of untyped dicts. ``tests/games/test_schema_types.py`` validates real views,
replays and events of played games against them, closed (no key the schema does not name).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers

from core.strict import StrictInput
from games.idempotency import MAX_KEY_LENGTH
from games.models import EventKind, MoveSource
from games.steps import FORFEIT_REASONS
from games.uno.cards import CODES, COLORS
from games.uno.options import MAX_PLAYERS, MAX_TARGET_SCORE, MIN_PLAYERS
from games.uno.state import PHASE_NAMES

MOVE_TYPES = ["play", "draw", "keep", "challenge", "accept", "catch", "uno", "color"]
CARD_CODES = list(CODES)
HAND_END_REASONS = ["out", "turn_cap"]
END_REASONS = ["match", "forfeit", "abandoned", "staff", "interrupted"]
DIRECTIONS = [1, -1]
MAX_SEAT = MAX_PLAYERS - 1
INT64_MAX = 2**63 - 1

# Stable names for the enums of generated clients: SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]
# names these (and the one-value discriminators of the unions below, after their variants).
DIRECTION_CHOICES = [(1, 1), (-1, -1)]


def _card(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=CARD_CODES, **kwargs)


def _seat(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=MAX_SEAT, **kwargs)


class Discriminator(serializers.ChoiceField):
    """A union's discriminator: one value, so each variant's model parses only its own."""

    def __init__(self, value: str) -> None:
        self.choices_value = value
        super().__init__(choices=[value])


def _one(value: str) -> Discriminator:
    return Discriminator(value)


# --- moves and options ------------------------------------------------------------------------
class Move(StrictInput):
    """One move, as sent and as listed in `legal_moves`: send a legal move back unchanged."""

    type = serializers.ChoiceField(choices=MOVE_TYPES)
    card = _card(required=False, help_text="Card code (`play`).")
    color = serializers.ChoiceField(
        choices=list(COLORS), required=False, help_text="Declared colour (a wild's `play`, "
        "`color`)."
    )
    target = _seat(required=False, help_text="Seat to swap with (Seven-O 7) or to `catch`.")
    uno = serializers.BooleanField(
        required=False, help_text="Call Uno with the penultimate card's `play` (listed only "
        "when true)."
    )


class Options(serializers.Serializer):
    """A game's rule options, every one of them (see docs/rules.md)."""

    players = serializers.IntegerField(min_value=MIN_PLAYERS, max_value=MAX_PLAYERS)
    stacking = serializers.BooleanField()
    seven_o = serializers.BooleanField()
    jump_in = serializers.BooleanField()
    draw_until_playable = serializers.BooleanField()
    deck_2018 = serializers.BooleanField()
    start_2022 = serializers.BooleanField()
    single_hand = serializers.BooleanField()
    target_score = serializers.IntegerField(min_value=1, max_value=MAX_TARGET_SCORE)


@extend_schema_serializer(component_name="Options")  # as a request body: "OptionsRequest"
class OptionsInput(StrictInput):
    """The options a new table asks for; any left out take the official rule."""

    players = serializers.IntegerField(
        min_value=MIN_PLAYERS, max_value=MAX_PLAYERS, required=False,
        help_text="Default: `seats`, else 2 (must equal `seats` when both are given).",
    )
    stacking = serializers.BooleanField(default=False)
    seven_o = serializers.BooleanField(default=False)
    jump_in = serializers.BooleanField(default=False)
    draw_until_playable = serializers.BooleanField(default=False)
    deck_2018 = serializers.BooleanField(default=False)
    start_2022 = serializers.BooleanField(default=False)
    single_hand = serializers.BooleanField(default=False)
    target_score = serializers.IntegerField(min_value=1, max_value=MAX_TARGET_SCORE, default=500)


# --- a seat's view and a replay's full state ------------------------------------------------
class LastHand(serializers.Serializer):
    hand_number = serializers.IntegerField()
    winner = _seat(allow_null=True, help_text="Null when the hand hit the move cap.")
    points = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=HAND_END_REASONS)
    hand_points = serializers.ListField(child=serializers.IntegerField())


class PendingDrawn(serializers.Serializer):
    type = _one("drawn")
    seat = _seat()
    card = _card(required=False, help_text="The card drawn: shown to the drawer only.")


class PendingColor(serializers.Serializer):
    type = _one("color")
    seat = _seat()


class PendingChallenge(serializers.Serializer):
    type = _one("challenge")
    seat = _seat()
    player = _seat(help_text="Who played the Wild Draw Four.")
    penalty = serializers.IntegerField()


class PendingStack(serializers.Serializer):
    type = _one("stack")
    seat = _seat()
    penalty = serializers.IntegerField()


class ReplayPendingDrawn(PendingDrawn):
    card = _card()


class ReplayPendingChallenge(PendingChallenge):
    player_held_color = serializers.BooleanField(
        help_text="Whether the Wild Draw Four was played illegally (a challenge wins)."
    )


def _pending(name: str, *variants: type[serializers.Serializer]) -> type[serializers.Field]:
    @extend_schema_field(
        PolymorphicProxySerializer(
            component_name=name,
            serializers={v._declared_fields["type"].choices_value: v for v in variants},
            resource_type_field_name="type", allow_null=True,
        )
    )
    class PendingField(serializers.JSONField):
        pass

    return PendingField


SeatPendingField = _pending("Pending", PendingDrawn, PendingColor, PendingChallenge, PendingStack)
ReplayPendingField = _pending(
    "ReplayPending", ReplayPendingDrawn, PendingColor, ReplayPendingChallenge, PendingStack
)


_CARDS = {"type": "array", "items": {"$ref": "#/components/schemas/CardCode"}}


@extend_schema_field(_CARDS)
class CardsField(serializers.JSONField):
    """A list of card codes (the enum's component is named by ``ENUM_NAMES``)."""


class _Public(serializers.Serializer):
    """What every seat may know (the engine's ``view._public``)."""

    options = Options()
    hand_counts = serializers.ListField(child=serializers.IntegerField(min_value=0))
    top = _card(help_text="The top card of the discard pile.")
    color = serializers.ChoiceField(
        choices=list(COLORS), allow_null=True, help_text="The colour to match; null while the "
        "first player chooses it (a Wild turned up)."
    )
    direction = serializers.ChoiceField(choices=DIRECTIONS)
    turn = _seat()
    awaiting = _seat(allow_null=True, help_text="The seat whose decision the game waits for.")
    phase = serializers.ChoiceField(choices=list(PHASE_NAMES))
    uno_window = _seat(
        allow_null=True, help_text="A seat that may be caught for a missed Uno call."
    )
    scores = serializers.ListField(child=serializers.IntegerField())
    hand_number = serializers.IntegerField()
    dealer = _seat()
    deck_count = serializers.IntegerField(min_value=0)
    discard_count = serializers.IntegerField(min_value=0)
    move_count = serializers.IntegerField(min_value=0)
    finished = serializers.BooleanField()
    winner = _seat(allow_null=True)
    last_hand = LastHand(allow_null=True, help_text="How the previous hand ended.")


class ChallengeReveal(serializers.Serializer):
    """The hand a challenged Wild Draw Four player privately showed the challenger."""

    seat = _seat(help_text="Who played the Wild Draw Four (whose hand this is).")
    hand = serializers.ListField(
        child=_card(), help_text="Their cards right after playing the Wild Draw Four."
    )


class SeatView(_Public):
    """Everything one seat may know; nothing of other hands, the deck or the seed."""

    seat = _seat()
    hand = serializers.ListField(child=_card(), help_text="Your cards.")
    pending = SeatPendingField(help_text="The decision the game waits for; null on an "
                               "ordinary turn.")
    challenge_reveal = ChallengeReveal(
        allow_null=True, help_text="You challenged a Wild Draw Four: the hand its player "
        "showed you (only you), until your next move. Null otherwise."
    )
    legal_moves = Move(many=True, help_text="Every move you may send now (in turn or not).")


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"$ref": "#/components/schemas/Move"}},
        "description": "Each seat's legal moves, by seat number (\"0\", \"1\"...).",
    }
)
class LegalMovesBySeatField(serializers.JSONField):
    pass


@extend_schema_field({"type": "array", "items": _CARDS})
class HandsField(serializers.JSONField):
    pass


class ReplayState(_Public):
    """The whole state, hidden information included: replays of finished games only."""

    seed = serializers.IntegerField(min_value=0, max_value=INT64_MAX)
    hands = HandsField(help_text="Every seat's cards.")
    deck = CardsField(help_text="The deck, next card to draw first.")
    discard = CardsField(help_text="The discard pile, bottom first.")
    pending = ReplayPendingField()
    legal_moves = LegalMovesBySeatField()


# --- events -----------------------------------------------------------------------------------
class PlayerData(serializers.Serializer):
    player = serializers.CharField()


class StartedData(serializers.Serializer):
    players = serializers.ListField(child=serializers.CharField())


class MoveData(serializers.Serializer):
    number = serializers.IntegerField(min_value=1)
    move = Move()
    source = serializers.ChoiceField(choices=MoveSource.choices)


class StrikeData(serializers.Serializer):
    strikes = serializers.IntegerField(min_value=1)
    max_strikes = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(
        required=False,
        help_text="Why: `clock` (the turn clock ran out), or the kind of a bot's failed call "
        "(`timeout`, `status`, `not_json`, `illegal`...: docs/bot-protocol.md). Absent on "
        "turn clock strikes written before 2026-11-24.")


class ForfeitData(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=list(FORFEIT_REASONS), required=False,
        help_text="Why: `strikes` (the table's max strikes), `disabled` (its bot was "
        "disabled), `unresponsive` (its bot answered none of its calls; a tournament then "
        "forfeits its seats in the match's later games without a call). Absent on events "
        "written before 2026-11-24.")


class EndData(serializers.Serializer):
    reason = serializers.ChoiceField(choices=END_REASONS)
    winner = _seat(allow_null=True)
    scores = serializers.ListField(child=serializers.IntegerField())


def _event(kind: EventKind, data: type[serializers.Field], seat: bool) -> type:
    """One kind of event: ``seat`` says whether the event names a seat (else it is null)."""
    fields = {
        "version": serializers.IntegerField(min_value=1),
        "kind": _one(kind.value),
        "seat": _seat() if seat else serializers.IntegerField(
            allow_null=True, help_text="Always null: the event is the table's."
        ),
        "data": data(),
        "created_at": serializers.DateTimeField(),
    }
    return type(f"{kind.label}Event", (serializers.Serializer,), fields)


EVENT_TYPES = [
    _event(EventKind.JOINED, PlayerData, seat=True),
    _event(EventKind.LEFT, PlayerData, seat=True),
    _event(EventKind.STARTED, StartedData, seat=False),
    _event(EventKind.MOVE, MoveData, seat=True),
    _event(EventKind.STRIKE, StrikeData, seat=True),
    _event(EventKind.FORFEITED, ForfeitData, seat=True),
    _event(EventKind.FINISHED, EndData, seat=False),
    _event(EventKind.ABORTED, EndData, seat=False),
]

EVENT = PolymorphicProxySerializer(
    component_name="Event",
    serializers={e._declared_fields["kind"].choices_value: e for e in EVENT_TYPES},
    resource_type_field_name="kind",
)


# --- parameters -------------------------------------------------------------------------------
GAME_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Game id.")

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH, "pattern": r"\S"},
    OpenApiParameter.HEADER,
    required=False,
    description=f"Any unique string (e.g. a UUID) per intended move; 1-{MAX_KEY_LENGTH} "
    "characters, not all blank.",
)


def etag_header(*codes: int) -> OpenApiParameter:
    return OpenApiParameter(
        "ETag", str, OpenApiParameter.HEADER, required=True,
        description="Names the game, version and seat of the view: send it back as "
        "`If-None-Match` to `view` (with `wait` to long-poll).",
        examples=[OpenApiExample("Game 7 at version 12 for seat 0", value='"7-12-0"')],
        response=list(codes),
    )
