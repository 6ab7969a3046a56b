"""The tournaments REST API: create, list, enter and withdraw bots, start, cancel, progress and
standings; the Elo leaderboard and a bot's rating history. Thin views over ``arena.services``
(writes) and ``arena.selectors`` (reads). Everyone signed in gets the same information here."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena import examples, presenters, selectors, services
from arena.errors import BotNotEligible, NotBotOwner, NotTournamentOwner, TournamentError
from arena.models import Entrant, RatingChange
from arena.serializers import (
    HISTORY_LIMIT_MAX,
    EntrantInput,
    LeaderboardQuery,
    LeaderboardRowOut,
    RatingHistoryOut,
    RatingQuery,
    StandingsOut,
    TournamentCreateInput,
    TournamentFilterInput,
    TournamentGameOut,
    TournamentOut,
    TournamentUpdateInput,
    progress_data,
    tournament_data,
    tournament_game_data,
)
from bots import selectors as bot_selectors
from core.api_errors import ApiError, error_responses
from core.strict import StrictPageNumberPagination, no_body, page_parameters, query_bool
from games.schema import INT64_MAX

TOURNAMENTS = ["tournaments"]
RATINGS = ["ratings"]
TOURNAMENT_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH,
                                 description="Tournament id.")
BOT_ID = OpenApiParameter("bot_id", OpenApiTypes.INT, OpenApiParameter.PATH,
                          description="Bot id.")


def _text(most: int) -> dict[str, Any]:
    """A query parameter's text, as the query serializers take it: blank is refused."""
    return {"type": "string", "minLength": 1, "maxLength": most}


RULE_SET = OpenApiParameter("rule_set", _text(200), required=False,
                            description="The ladder: `official` (default) or its rules as a "
                            "tournament's `rule_set` names them (in any order).")


class NotEntered(ApiError):
    status_code = 404
    default_code = "not_entered"
    default_detail = "The bot is not entered in this tournament."


# The errors the operations answer with, as the services raise them (the schema's examples).
_NO_SUCH_BOT = ValidationError({"bot": ["No such bot."]})
_STARTED = TournamentError("The tournament has started: it takes no more entrants.")
_FIXED = TournamentError("The tournament has started: its entrants are fixed.")
_TOO_FEW = TournamentError("a table of 2 needs at least 2 entrants")
_ALREADY = TournamentError("The tournament has started.")
_UNFIT = BotNotEligible("No longer verified and enabled: greedy-2. Their owners may verify or "
                        "enable them again, or the tournament's owner may withdraw them.")
_OVER = TournamentError("The tournament is already over.")
_NOT_DRAFT_SETTINGS = TournamentError("The tournament has started: only a draft's settings "
                                      "can change.")
_NOT_DRAFT = TournamentError("The tournament has started: only a draft can be deleted (cancel "
                             "it instead); a tournament that has started keeps its record.")


def _example(name: str, value: Any, description: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, description=description)


def _request_example(name: str, value: Any) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


def _bool_param(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.BOOL, required=False, description=description)


def _tournament_out(tournament_id: int) -> dict[str, Any]:
    return tournament_data(presenters.tournament_get(tournament_id=tournament_id))


class TournamentPagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/tournaments/"
    page_size = 20
    max_page_size = 100


class LeaderboardPagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/leaderboard/"

    def get_paginated_response_schema(self, schema: Any) -> dict[str, Any]:
        out = super().get_paginated_response_schema(schema)
        out["properties"]["ladders"] = {
            "type": "array", "items": {"type": "string"}, "example": ["official", "single_hand"],
            "description": "Every ladder anyone is rated on, the official one first.",
        }
        out.setdefault("required", []).append("ladders")
        return out


class TournamentListCreateApi(GenericAPIView):
    pagination_class = TournamentPagination
    serializer_class = TournamentOut

    @extend_schema(
        operation_id="tournaments_list",
        tags=TOURNAMENTS,
        summary="List tournaments",
        description="Newest first. Filter by `status` and `mine=true` (tournaments you own "
        "or have a bot in).",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, required=False,
                             enum=["draft", "running", "finished", "cancelled"]),
            _bool_param("mine", "Only tournaments you own or have a bot in."),
            *page_parameters(TournamentPagination),
        ],
        responses={
            200: OpenApiResponse(TournamentOut(many=True), "A page of tournaments.",
                                 examples=[_example("A running tournament", examples.RUNNING)]),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request) -> Response:
        query = TournamentFilterInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        mine = query_bool(request.query_params, "mine")
        tournaments = presenters.tournament_list(
            user=request.user, mine=mine, status=query.validated_data.get("status")
        )
        page = self.paginate_queryset(tournaments)
        return self.get_paginated_response([tournament_data(t) for t in page])

    @extend_schema(
        operation_id="tournaments_create",
        tags=TOURNAMENTS,
        summary="Create a tournament",
        description="A round robin in `draft`: owners then enter their bots, and you start "
        "it. Every pairing (every combination of `table_size` bots) plays "
        "`games_per_pairing` games with the seats rotated; `duplicate_deals` replays each "
        "deal with the seats permuted. The seed of the deals is drawn at random and never "
        "shown (each finished game's replay has its own). Options are checked by the rules "
        "engine: a bad one is a 400 naming the field.",
        request=TournamentCreateInput,
        responses={
            201: OpenApiResponse(TournamentOut, "The new tournament, in `draft`.",
                                 examples=[_example("Created", examples.DRAFT)]),
            **error_responses(400, 401),
        },
        examples=[_request_example("Single hands, duplicate deals", examples.CREATE_REQUEST)],
    )
    def post(self, request: Request) -> Response:
        body = TournamentCreateInput(data=request.data)
        body.is_valid(raise_exception=True)
        tournament = services.tournament_create(owner=request.user, **body.validated_data)
        return Response(_tournament_out(tournament.pk), status=status.HTTP_201_CREATED)


class TournamentDetailApi(APIView):
    @extend_schema(
        operation_id="tournaments_retrieve",
        tags=TOURNAMENTS,
        summary="A tournament, with its progress",
        description="Its settings, entrants and progress: matches and games done out of the "
        "total, and an estimate of the time left (updated as games finish).",
        parameters=[TOURNAMENT_ID],
        responses={
            200: OpenApiResponse(TournamentOut, "The tournament.",
                                 examples=[_example("Running", examples.RUNNING),
                                           _example("Finished", examples.FINISHED)]),
            **error_responses(401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(_tournament_out(id))

    @extend_schema(
        operation_id="tournaments_partial_update",
        tags=TOURNAMENTS,
        summary="Change a draft's settings",
        description="The tournament's owner (or staff), while it is a `draft`: any of the "
        "settings it was created with; those left out are kept (in `options` too: the rules "
        "named change, the others stay), and the entrants stay entered. They are checked "
        "together, as at creation (a table size the options' "
        "`players` disagrees with, duplicate deals that do not fit the games per pairing: "
        "400, and nothing changes). Once started, a tournament's settings are its record: "
        "409.",
        parameters=[TOURNAMENT_ID],
        request=TournamentUpdateInput,
        responses={
            200: OpenApiResponse(TournamentOut, "The draft, as it now is.",
                                 examples=[_example("Changed", examples.DRAFT)]),
            **error_responses(400, 401, 403, 404, 409,
                              raises=[NotTournamentOwner(), _NOT_DRAFT_SETTINGS]),
        },
        examples=[_request_example("More games", {"games_per_pairing": 8})],
    )
    def patch(self, request: Request, id: int) -> Response:
        presenters.tournament_get(tournament_id=id)
        body = TournamentUpdateInput(data=request.data)
        body.is_valid(raise_exception=True)
        services.tournament_update(tournament_id=id, user=request.user,
                                   changes=body.validated_data)
        return Response(_tournament_out(id))

    @extend_schema(
        operation_id="tournaments_destroy",
        tags=TOURNAMENTS,
        summary="Delete a draft",
        description="The tournament's owner (or staff), while it is a `draft`: it goes, with "
        "its entrants (a typo in its settings: change them with `PATCH` instead). Once "
        "started, a tournament keeps its record: 409, cancel it instead.",
        parameters=[TOURNAMENT_ID],
        request=None,
        responses={
            204: OpenApiResponse(description="Deleted."),
            **error_responses(400, 401, 403, 404, 409,
                              raises=[NotTournamentOwner(), _NOT_DRAFT]),
        },
    )
    def delete(self, request: Request, id: int) -> Response:
        no_body(request)
        presenters.tournament_get(tournament_id=id)
        services.tournament_delete(tournament_id=id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TournamentEntrantsApi(APIView):
    @extend_schema(
        operation_id="tournaments_enter",
        tags=TOURNAMENTS,
        summary="Enter a bot",
        description="Enter one of your own bots while the tournament is in `draft`. Only a "
        "verified, enabled bot may enter: an unverified or disabled one is a 409 "
        "`bot_not_eligible` (a state to fix, not a malformed request: verify it with `POST "
        "/api/bots/{id}/verify/`, or enable it, then enter again). Someone else's bot is a "
        "403 `not_bot_owner`; a bot id that does not exist a 400 naming `bot`; an unknown "
        "tournament a 404. Entering a bot that is in already changes nothing: a 200 with the "
        "tournament, where a new entrant is a 201.",
        parameters=[TOURNAMENT_ID],
        request=EntrantInput,
        responses={
            201: OpenApiResponse(TournamentOut, "The tournament with its entrants.",
                                 examples=[_example("Entered", examples.WITH_ENTRANTS)]),
            200: OpenApiResponse(TournamentOut, "The bot was in already: nothing changed.",
                                 examples=[_example("In already", examples.WITH_ENTRANTS)]),
            **error_responses(400, 401, 403, 404, 409, raises=[
                _NO_SUCH_BOT, NotBotOwner(), BotNotEligible(), _STARTED]),
        },
        examples=[_request_example("Your bot", examples.ENTER_REQUEST)],
    )
    def post(self, request: Request, id: int) -> Response:
        body = EntrantInput(data=request.data)
        body.is_valid(raise_exception=True)
        presenters.tournament_get(tournament_id=id)  # 404 first: no such tournament
        _, new = services.entrant_enter(tournament_id=id, bot_id=body.validated_data["bot"],
                                        user=request.user)
        return Response(_tournament_out(id),
                        status=status.HTTP_201_CREATED if new else status.HTTP_200_OK)


class TournamentEntrantApi(APIView):
    @extend_schema(
        operation_id="tournaments_withdraw",
        tags=TOURNAMENTS,
        summary="Withdraw a bot",
        description="Take a bot out while the tournament is in `draft`: the bot's owner, "
        "the tournament's owner or staff. 404 `not_entered` if it is not in.",
        parameters=[TOURNAMENT_ID, BOT_ID],
        responses={
            204: OpenApiResponse(description="Withdrawn."),
            **error_responses(401, 403, 404, 409,
                              raises=[NotBotOwner(), NotEntered(), _FIXED]),
        },
    )
    def delete(self, request: Request, id: int, bot_id: int) -> Response:
        presenters.tournament_get(tournament_id=id)
        if not Entrant.objects.filter(tournament_id=id, bot_id=bot_id).exists():
            raise NotEntered()
        services.entrant_withdraw(tournament_id=id, bot_id=bot_id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TournamentStartApi(APIView):
    @extend_schema(
        operation_id="tournaments_start",
        tags=TOURNAMENTS,
        summary="Start a tournament",
        description="The tournament's owner (or staff). Builds the schedule and queues one "
        "task per match; the games run on the workers (on the embedded default, in the "
        "server's process, in the background), never inside this request. Needs at least "
        "`table_size` entrants (409 `tournament_conflict`, as for a tournament already "
        "started), and every entrant still verified and enabled (409 `bot_not_eligible` "
        "naming the others: verify or enable them again, or withdraw them).",
        parameters=[TOURNAMENT_ID],
        request=None,
        responses={
            200: OpenApiResponse(TournamentOut, "The tournament, running.",
                                 examples=[_example("Started", examples.RUNNING)]),
            **error_responses(400, 401, 403, 404, 409, raises=[
                NotTournamentOwner(), _ALREADY, _TOO_FEW, _UNFIT]),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        no_body(request)
        presenters.tournament_get(tournament_id=id)
        services.tournament_start(tournament_id=id, user=request.user)
        return Response(_tournament_out(id))


class TournamentCancelApi(APIView):
    @extend_schema(
        operation_id="tournaments_cancel",
        tags=TOURNAMENTS,
        summary="Cancel a tournament",
        description="The tournament's owner (or staff), in `draft` or `running`: matches not "
        "yet started are dropped, running ones stop at their next game. Games already "
        "played keep their results (and their Elo changes).",
        parameters=[TOURNAMENT_ID],
        request=None,
        responses={
            200: OpenApiResponse(TournamentOut, "The tournament, cancelled.",
                                 examples=[_example("Cancelled", examples.CANCELLED)]),
            **error_responses(400, 401, 403, 404, 409,
                              raises=[NotTournamentOwner(), _OVER]),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        no_body(request)
        presenters.tournament_get(tournament_id=id)
        services.tournament_cancel(tournament_id=id, user=request.user)
        return Response(_tournament_out(id))


class TournamentStandingsApi(APIView):
    @extend_schema(
        operation_id="tournaments_standings",
        tags=TOURNAMENTS,
        summary="Standings",
        description="Games, wins, win rate, points scored, average points left in hand, "
        "strikes and forfeits per entrant, in `rank` order (by win rate: the tournament's "
        "placing); current while it runs. Once finalized (`final`), each line has its "
        "Bradley-Terry rating and 95% bootstrap interval, an estimate of strength from the "
        "whole finishing order, which may order the bots otherwise at 3+ seats "
        "(docs/ratings.md).",
        parameters=[TOURNAMENT_ID],
        responses={
            200: OpenApiResponse(StandingsOut, "The table.",
                                 examples=[_example("Final", examples.STANDINGS)]),
            **error_responses(401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        tournament = presenters.tournament_get(tournament_id=id)
        return Response({
            "tournament": tournament.pk,
            "status": tournament.status,
            "final": tournament.finalized_at is not None,
            "progress": progress_data(tournament),
            "standings": presenters.standings_rows(tournament=tournament),
        })


class TournamentGamesPagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/tournaments/7/games/"


class TournamentGamesApi(GenericAPIView):
    pagination_class = TournamentGamesPagination
    serializer_class = TournamentGameOut

    @extend_schema(
        operation_id="tournaments_games",
        tags=TOURNAMENTS,
        summary="The games played",
        description="Every recorded game of the tournament (while it runs too), by its "
        "`number` in the schedule: its bots by seat, the winner, scores, points left in hand, "
        "strikes and forfeits. Matches are played side by side, so while it runs a game "
        "recorded later may take a place before games already listed, and move the pages "
        "after it. Each game's replay (`GET /api/games/{id}/replay/`) is open to every user.",
        parameters=[TOURNAMENT_ID, *page_parameters(TournamentGamesPagination)],
        responses={
            200: OpenApiResponse(TournamentGameOut(many=True), "A page of games.",
                                 examples=[_example("One game", examples.TOURNAMENT_GAME)]),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        tournament = presenters.tournament_get(tournament_id=id)
        page = self.paginate_queryset(selectors.tournament_games(tournament=tournament))
        return self.get_paginated_response([tournament_game_data(g) for g in page])


class LeaderboardApi(GenericAPIView):
    pagination_class = LeaderboardPagination
    serializer_class = LeaderboardRowOut

    @extend_schema(
        operation_id="leaderboard",
        tags=RATINGS,
        summary="The Elo leaderboard",
        description="Bots by Elo on one ladder (`rule_set`; by default `official`, or while "
        "nobody is rated on the official rules, the ladder with the most rated games, as the "
        "admin's leaderboard opens), with the 95% interval of their latest finished rated "
        "tournament of that rule set, games, win rate, latency p50/p99 and strikes. Filters: "
        "`owner` (a user name), `verified`, `active` (enabled), `search` (part of the name); a "
        "row's `rank` stays its place on the whole ladder. `ladders` lists every ladder anyone "
        "is rated on; each row's `rule_set` names the one shown.",
        parameters=[
            RULE_SET,
            OpenApiParameter("owner", _text(150), required=False,
                             description="Only bots of this user."),
            _bool_param("verified", "Only verified (true) or unverified (false) bots."),
            _bool_param("active", "Only enabled (true) or disabled (false) bots."),
            OpenApiParameter("search", _text(64), required=False,
                             description="Part of the bot's name."),
            *page_parameters(LeaderboardPagination),
        ],
        responses={
            200: OpenApiResponse(LeaderboardRowOut(many=True), "A page of the ladder.",
                                 examples=[_example("The leader", examples.LEADERBOARD_ROW)]),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request) -> Response:
        query = LeaderboardQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = request.query_params
        verified = query_bool(params, "verified") if "verified" in params else None
        active = query_bool(params, "active") if "active" in params else None
        rule_set = (query.validated_data["rule_set"] if "rule_set" in params
                    else selectors.default_rule_set())
        ratings = presenters.leaderboard_queryset(
            rule_set=rule_set,
            owner=query.validated_data.get("owner"), verified=verified, active=active,
            search=query.validated_data.get("search"),
        )
        page = self.paginate_queryset(ratings) or []
        response = self.get_paginated_response(presenters.leaderboard_rows(page))
        response.data["ladders"] = selectors.rule_sets()
        return response


class BotRatingsApi(APIView):
    @extend_schema(
        operation_id="bots_ratings",
        tags=RATINGS,
        summary="A bot's rating history",
        description="Its Elo on one ladder (`rule_set`, default `official`) after each rated "
        "game, oldest first, in the fixed order the games were recorded, each game with its "
        "tournament; and `ladders`, every rule set it has an Elo on (a bot that never played "
        "the official rules has `elo: null` and no history there: its ladders say where to "
        "look). `limit` asks for the newest points only: the whole history grows with every "
        "game.",
        parameters=[OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH,
                                     description="Bot id."), RULE_SET,
                    OpenApiParameter("limit", {"type": "integer", "minimum": 1,
                                               "maximum": HISTORY_LIMIT_MAX}, required=False,
                                     description="Only the newest this many points (still "
                                     "oldest first; `more` says whether older ones were left "
                                     "out). Without it, the whole history."),
                    OpenApiParameter("before", {"type": "integer", "minimum": 1,
                                                "maximum": INT64_MAX},
                                     required=False,
                                     description="A game id from this history: only the points "
                                     "older than that game's. With `limit`, pages back: pass "
                                     "the first point's `game` while `more` is true. A game "
                                     "not in the history is a 400.")],
        responses={
            200: OpenApiResponse(RatingHistoryOut, "The history.",
                                 examples=[_example("Two games", examples.HISTORY)]),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        query = RatingQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        bot = bot_selectors.bot_get(bot_id=id)
        try:
            return Response(presenters.rating_history_data(
                bot=bot, rule_set=query.validated_data["rule_set"],
                limit=query.validated_data.get("limit"),
                before=query.validated_data.get("before")))
        except RatingChange.DoesNotExist:
            raise ValidationError(
                {"before": ["No such game in this bot's history on this ladder."]}) from None

