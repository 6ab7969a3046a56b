"""Request and response bodies of the games API. Output serializers name every field they
show; nothing reads the hidden ``state`` or ``seed`` of a game except the replay."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.strict import (
    QueryFloatField,
    QueryIntegerField,
    QuerySerializer,
    StrictInput,
    StrictIntegerField,
)
from games import schema, services
from games.models import (
    DEFAULT_MAX_STRIKES,
    DEFAULT_TURN_SECONDS,
    Game,
    GameEvent,
    GameStatus,
    MoveRecord,
    MoveSource,
    Seat,
)
from games.rows import PublicSeat


# --- documented shapes of engine JSON (validation itself is the engine's) --------------------
@extend_schema_field(schema.OptionsInput)
class OptionsField(serializers.JSONField):
    """Rule options; checked by the engine (``Options.from_json``), not by DRF, so the API
    accepts exactly what the engine accepts."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be a JSON object")
        return data


@extend_schema_field(schema.Options)
class OptionsOutField(serializers.JSONField):
    """A game's options as stored: every option, the defaults filled in."""


@extend_schema_field(schema.Move)
class MoveField(serializers.JSONField):
    """A move; its shape is checked by the engine (``Move.from_json``) -> 400 malformed_move."""


@extend_schema_field(schema.SeatView)
class EngineViewField(serializers.JSONField):
    """The engine's view for one seat (``games.uno.view``), passed through as it is."""


@extend_schema_field(schema.ReplayState)
class ReplayStateField(serializers.JSONField):
    """The engine's full state view (``games.uno.full_view``), passed through as it is."""


@extend_schema_field(schema.EVENT)
class EventField(serializers.JSONField):
    """One event, of the kind its ``kind`` names (the schema's discriminated union)."""


class StrictBooleanField(serializers.BooleanField):
    """Only JSON ``true``/``false``: what the schema promises (DRF would also take 0, "yes")."""

    def to_internal_value(self, data: Any) -> bool:
        if type(data) is not bool:
            self.fail("invalid", input=data)
        return data


# --- games ------------------------------------------------------------------------------------
class GameCreateInput(StrictInput):
    seats = StrictIntegerField(
        min_value=2, max_value=10, required=False, help_text="Number of seats (2-10); sets "
        "options.players."
    )
    options = OptionsField(required=False, default=dict)
    turn_seconds = StrictIntegerField(
        min_value=1, max_value=86400, default=DEFAULT_TURN_SECONDS,
        help_text="Per-turn time limit for API players, in seconds.",
    )
    max_strikes = StrictIntegerField(
        min_value=1, max_value=100, default=DEFAULT_MAX_STRIKES,
        help_text="Timeouts after which a seat is forfeited.",
    )
    join = StrictBooleanField(default=True, help_text="Take seat 0 yourself.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Engine validation here too, so a bad option is a 400 naming the field.
        services.parse_options(attrs.get("options") or {}, seats=attrs.get("seats"))
        return attrs


class SeatOut(serializers.ModelSerializer):
    player = serializers.SerializerMethodField()

    class Meta:
        model = Seat
        fields = ("index", "player", "strikes", "forfeited")

    def get_player(self, seat: Seat) -> str | None:
        return seat.player


class GameOut(serializers.ModelSerializer):
    seats = SeatOut(many=True, read_only=True)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True)
    options = OptionsOutField(read_only=True)
    scores = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    open_seats = serializers.SerializerMethodField()
    my_seat = serializers.SerializerMethodField()

    class Meta:
        model = Game
        fields = (
            "id", "status", "end_reason", "options", "seats", "open_seats", "my_seat",
            "version", "move_count", "awaiting", "turn_deadline", "turn_seconds",
            "max_strikes", "hand_number", "scores", "winner", "created_by", "created_at",
            "started_at", "finished_at",
        )
        read_only_fields = fields

    def get_open_seats(self, game: Game) -> int:
        return sum(1 for s in game.seats.all() if not s.is_taken)

    def get_my_seat(self, game: Game) -> int | None:
        request = self.context.get("request")
        user_id = getattr(getattr(request, "user", None), "pk", None)
        for seat in game.seats.all():
            if user_id is not None and seat.user_id == user_id:
                return seat.index
        return None


def game_out_data(
    game: Game, creator: str | None, seats: list[PublicSeat], user_id: object
) -> dict[str, Any]:
    """``GameOut``'s fields, built directly for the answers to create, join, leave and start
    (a serializer cost more than the change itself). tests/games/test_tables.py holds the two
    to the same output."""
    return {
        "id": game.pk,
        "status": game.status,
        "end_reason": game.end_reason,
        "options": game.options,
        "seats": [
            {"index": s.index, "player": s.player, "strikes": s.strikes,
             "forfeited": s.forfeited}
            for s in seats
        ],
        "open_seats": sum(1 for s in seats if s.player is None),
        "my_seat": next((s.index for s in seats if user_id is not None and s.user_id == user_id),
                        None),
        "version": game.version,
        "move_count": game.move_count,
        "awaiting": game.awaiting,
        "turn_deadline": game.turn_deadline,
        "turn_seconds": game.turn_seconds,
        "max_strikes": game.max_strikes,
        "hand_number": game.hand_number,
        "scores": game.scores,
        "winner": game.winner,
        "created_by": creator,
        "created_at": game.created_at,
        "started_at": game.started_at,
        "finished_at": game.finished_at,
    }


class GameFilterInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=GameStatus.choices, required=False)
    mine = serializers.BooleanField(required=False, default=False)
    open_seats = serializers.BooleanField(required=False, default=False)


class JoinInput(StrictInput):
    seat = StrictIntegerField(
        min_value=0, max_value=9, required=False, help_text="A specific free seat; default "
        "the lowest free one."
    )
    bot = StrictIntegerField(
        min_value=1, required=False, help_text="Seat one of your enabled bots instead of "
        "yourself: the server then plays that seat by calling the bot."
    )


class LeaveInput(StrictInput):
    # Strict: a misspelt ``"bots": 6`` would otherwise take you off instead of the bot (and a
    # creator who is the only player would abort the table).
    bot = StrictIntegerField(
        min_value=1, required=False, help_text="Take your bot off its seat instead."
    )


# --- play -------------------------------------------------------------------------------------
class ViewOut(serializers.Serializer):
    game = serializers.IntegerField()
    version = serializers.IntegerField(help_text="Send this with your next move.")
    seat = serializers.IntegerField()
    status = serializers.ChoiceField(choices=GameStatus.choices)
    turn_deadline = serializers.DateTimeField(allow_null=True)
    view = EngineViewField(allow_null=True, help_text="Your view; null before the deal.")


class MoveInput(StrictInput):
    version = StrictIntegerField(min_value=0, help_text="The version your decision saw.")
    move = MoveField()


class MoveRecordOut(serializers.ModelSerializer):
    move = MoveField()
    source = serializers.ChoiceField(choices=MoveSource.choices)

    class Meta:
        model = MoveRecord
        fields = ("number", "version", "seat", "move", "source", "created_at")


class MovePlayedOut(ViewOut):
    played = MoveRecordOut()


class EventOut(serializers.ModelSerializer):
    """An event as sent (the schema describes it as ``schema.EVENT``, by kind)."""


    class Meta:
        model = GameEvent
        fields = ("version", "kind", "seat", "data", "created_at")


class EventsQuery(QuerySerializer):
    since = QueryIntegerField(
        min_value=0, max_value=schema.INT64_MAX, default=0, help_text="Last version you saw."
    )
    wait = QueryFloatField(
        min_value=0, max_value=25, default=0,
        help_text="Seconds to wait for an event before answering empty (long poll, max 25).",
    )


UNTIL_HELP = (
    "What `wait` waits for: `change` (any change to the game) or `turn` (your decision, or the "
    "game's end: other seats' moves in between are skipped, so a bot that never moves out of "
    "turn needs one answer per decision)."
)


class ViewQuery(QuerySerializer):
    wait = QueryFloatField(
        min_value=0, max_value=25, default=0,
        help_text="With `If-None-Match`: seconds to wait for a change before answering 304 "
        "(long poll, max 25). Answers 200 as soon as the game changes.",
    )
    until = serializers.ChoiceField(
        choices=["change", "turn"], default="change", help_text=UNTIL_HELP
    )


class MoveQuery(QuerySerializer):
    wait = QueryFloatField(
        min_value=0, max_value=25, default=0,
        help_text="Seconds to wait, after the move is applied, for the game to change again "
        "(usually: the opponents' replies) before answering; the body is then your view at "
        "that later version. Play-and-wait: one request per move for a bot (max 25).",
    )
    until = serializers.ChoiceField(
        choices=["change", "turn"], default="change", help_text=UNTIL_HELP
    )


class EventsOut(serializers.Serializer):
    game = serializers.IntegerField()
    version = serializers.IntegerField(help_text="The game's version now.")
    status = serializers.ChoiceField(choices=GameStatus.choices)
    events = serializers.ListField(child=EventField())
    more = serializers.BooleanField(help_text="More events follow: ask again with the last "
                                    "event's version as `since`.")


class ReplayMoveOut(serializers.Serializer):
    number = serializers.IntegerField()
    seat = serializers.IntegerField()
    move = MoveField()
    source = serializers.ChoiceField(choices=MoveSource.choices)
    created_at = serializers.DateTimeField()


class ReplayOut(serializers.Serializer):
    game = serializers.IntegerField()
    status = serializers.ChoiceField(choices=GameStatus.choices)
    end_reason = serializers.CharField()
    options = OptionsOutField()
    seed = serializers.IntegerField(
        min_value=0, max_value=2**63 - 1,
        help_text="63-bit: parse it as a 64-bit integer (a double, as in some JSON tools, "
        "loses digits).",
    )
    players = serializers.ListField(child=serializers.CharField(allow_null=True))
    winner = serializers.IntegerField(allow_null=True)
    scores = serializers.ListField(child=serializers.IntegerField())
    moves = ReplayMoveOut(many=True)
    deals = serializers.ListField(
        child=ReplayStateField(), help_text="Full state at the start of every hand."
    )
    final = ReplayStateField(
        allow_null=True, help_text="Full final state (every hand, deck); null when the game "
        "ended before the deal."
    )
