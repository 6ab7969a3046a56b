"""The games REST API: thin views over ``games.services`` (writes) and ``games.selectors``
(reads). Every operation documents its request, its responses (errors included) and examples.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import RETRY_AFTER, error_responses
from core.strict import StrictPageNumberPagination, no_body, query_bool
from core.throttling import FailOpenScopedRateThrottle
from games import examples, selectors, services, waits
from games.errors import (
    AlreadySeated,
    GameFull,
    GameNotOpen,
    GameNotOver,
    NotAPlayer,
    NotCreator,
    ReplayHeld,
    SeatsOpen,
    SeatTaken,
    TooManyOpenTables,
)
from games.filters import GameFilter
from games.models import Game
from games.schema import GAME_ID
from games.serializers import (
    EventOut,
    EventsOut,
    EventsQuery,
    GameCreateInput,
    GameOut,
    JoinInput,
    LeaveInput,
    ReplayOut,
    game_out_data,
)

GAMES = ["games"]
PLAY = ["play"]

# Examples are fabricated (games.examples): never real hidden information.
def example(name: str, value: Any, description: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, description=description)


def request_example(name: str, value: Any, description: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, description=description, request_only=True)


def game_or_404(game_id: int) -> Game:
    try:
        return selectors.game_get(game_id=game_id)
    except Game.DoesNotExist:
        raise Http404("No such game.") from None


def _game_out(game_id: int, request: Request) -> dict[str, Any]:
    """The game as it is after a change (the services raise DoesNotExist, a 404, before)."""
    game, creator, seats = selectors.game_after_change(game_id=game_id)
    return game_out_data(game, creator, seats, request.user.pk)


class GamePagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/games/"
    page_size = 20
    max_page_size = 100


class GameListCreateApi(generics.ListAPIView):
    serializer_class = GameOut
    pagination_class = GamePagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = GameFilter

    def get_queryset(self) -> QuerySet[Game]:
        return selectors.game_list(user=self.request.user)

    @extend_schema(
        operation_id="games_list",
        tags=GAMES,
        summary="List games",
        description="Newest first. Filter by `status`, `mine=true` (games you sit in) and "
        "`open_seats=true` (open games with a free seat: the lobby, where each creator's "
        "newest table comes before anyone's second, so no one player can fill a page).",
        responses={
            200: OpenApiResponse(
                GameOut(many=True),
                "A page of games.",
                examples=[example("A table with a free seat", examples.GAME_LISTED)],
            ),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="games_create",
        tags=GAMES,
        summary="Create a game",
        description="A table with 2-10 seats and rule options (checked by the rules engine: a "
        "bad value is a 400 naming the field). You take seat 0 unless `join` is false. One "
        "player may have only so many open (not yet started) tables: 409 "
        "`too_many_open_tables` beyond that.",
        request=GameCreateInput,
        responses={
            201: OpenApiResponse(
                GameOut,
                "The new table; `my_seat` is 0 unless `join` was false.",
                examples=[example("An open table", examples.GAME_OPEN)],
            ),
            **error_responses(400, 401, 409, raises=[TooManyOpenTables()]),
        },
        examples=[request_example("Two players, one hand", examples.CREATE_REQUEST)],
    )
    def post(self, request: Request) -> Response:
        body = GameCreateInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        game = services.game_create(
            user=request.user,
            options=data.get("options") or {},
            seats=data.get("seats"),
            turn_seconds=data["turn_seconds"],
            max_strikes=data["max_strikes"],
            join=data["join"],
        )
        return Response(_game_out(game.pk, request), status=status.HTTP_201_CREATED)


class GameDetailApi(APIView):
    @extend_schema(
        operation_id="games_retrieve",
        tags=GAMES,
        summary="A game's public state",
        parameters=[GAME_ID],
        responses={
            200: OpenApiResponse(
                GameOut,
                "The game; `my_seat` is your seat, or null.",
                examples=[
                    example("Running", examples.GAME_RUNNING),
                    example("Finished", examples.GAME_FINISHED),
                ],
            ),
            **error_responses(401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(GameOut(game_or_404(id), context={"request": request}).data)


class GameJoinApi(APIView):
    @extend_schema(
        operation_id="games_join",
        tags=GAMES,
        summary="Take a seat",
        description="Takes the lowest free seat, or `seat` if given. One seat per user. With "
        "`bot`, seats one of your enabled bots instead (one seat per bot; you may sit at the "
        "same table yourself): the server plays that seat by calling the bot.",
        parameters=[GAME_ID],
        request=JoinInput,
        responses={
            200: OpenApiResponse(
                GameOut,
                "The game with your seat (`my_seat`).",
                examples=[example("Seated at 1", examples.GAME_JOINED)],
            ),
            **error_responses(400, 401, 403, 404, 409, raises=[
                ValidationError({"seat": ["This table's seats are 0 to 1."]}),
                AlreadySeated(), SeatTaken(), GameFull(), GameNotOpen(),
            ]),
        },
        examples=[
            request_example(
                "The lowest free seat", examples.JOIN_REQUEST_ANY, "An empty body (or none)."
            ),
            request_example("A given seat", examples.JOIN_REQUEST_SEAT),
            request_example("Seat your bot 3 at seat 1", examples.JOIN_REQUEST_BOT),
        ],
    )
    def post(self, request: Request, id: int) -> Response:
        body = JoinInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        services.seat_join(
            game_id=id, user=request.user, index=data.get("seat"), bot_id=data.get("bot")
        )
        return Response(_game_out(id, request))


class GameLeaveApi(APIView):
    @extend_schema(
        operation_id="games_leave",
        tags=GAMES,
        summary="Give up your seat before the start",
        description="When the last player leaves, the game is aborted. With `bot`, takes your "
        "bot off its seat.",
        parameters=[GAME_ID],
        request=LeaveInput,
        responses={
            200: OpenApiResponse(
                GameOut,
                "The game without you (`aborted` if nobody is left).",
                examples=[example("Seat 1 free again", examples.GAME_LEFT)],
            ),
            **error_responses(400, 401, 403, 404, 409, raises=[
                ValidationError({"bot": ["Ensure this value is greater than or equal to 1."]}),
                NotAPlayer(), GameNotOpen("You can only leave before the game starts."),
            ]),
        },
        examples=[
            request_example("Leave yourself", examples.JOIN_REQUEST_ANY, "An empty body."),
            request_example("Take your bot 3 off", examples.LEAVE_REQUEST_BOT),
        ],
    )
    def post(self, request: Request, id: int) -> Response:
        body = LeaveInput(data=request.data)
        body.is_valid(raise_exception=True)
        services.seat_leave(game_id=id, user=request.user, bot_id=body.validated_data.get("bot"))
        return Response(_game_out(id, request))


class GameStartApi(APIView):
    @extend_schema(
        operation_id="games_start",
        tags=GAMES,
        summary="Deal and start",
        description="Creator only, once every seat is taken (409 `seats_open` otherwise).",
        parameters=[GAME_ID],
        request=None,
        responses={
            200: OpenApiResponse(
                GameOut,
                "The running game: `awaiting` is the seat to play first.",
                examples=[example("Dealt", examples.GAME_STARTED)],
            ),
            **error_responses(400, 401, 403, 404, 409, raises=[
                NotCreator(), GameNotOpen(), SeatsOpen(),
            ]),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        no_body(request)
        services.game_start(game_id=id, user=request.user)
        return Response(_game_out(id, request))



class GameEventsApi(APIView):
    @extend_schema(
        operation_id="games_events",
        tags=PLAY,
        summary="Events since a version (long poll)",
        description="Public events after version `since`: joins, start, moves, strikes, "
        "forfeits, the end. Each event has its own version. With `wait` (seconds, up to 25) "
        "the request waits until something happens instead of answering empty, so a client "
        "can follow a game without hammering the server. Over a cap on waiting requests (per "
        "user in each server process, and per process; not across the server) a `wait` is a "
        "429 `too_many_waits` with `Retry-After`.",
        parameters=[GAME_ID, EventsQuery, RETRY_AFTER],
        responses={
            200: OpenApiResponse(
                EventsOut,
                "The events after `since` (empty when a long poll saw nothing).",
                examples=[
                    example("From the start", examples.EVENTS, "`since=0`."),
                    example("Nothing happened", examples.EVENTS_NONE, "`since=12&wait=25`."),
                ],
            ),
            **error_responses(400, 401, 404, 429, raises=[waits.TooManyWaits()]),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        query = EventsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        since = query.validated_data["since"]
        # A missing game is a DoesNotExist from the wait (a 404); no need to load it first.
        services.turn_clock_enforce(game_id=id)  # a read settles an overdue clock
        wait = query.validated_data["wait"]
        with waits.slot_or_429(request.user.pk, wait):
            page = selectors.events_wait(game_id=id, since=since, wait=wait)
        return events_response(id, page)


def events_response(game_id: int, page: selectors.EventsPage) -> Response:
    return Response(
        {
            "game": game_id,
            "version": page.version,
            "status": page.status,
            "events": EventOut(page.events, many=True).data,
            "more": page.more,
        }
    )


class GameReplayApi(APIView):
    # Even cached, a long replay is a big answer: each user gets so many a minute.
    throttle_scope = "replay"
    throttle_classes = [FailOpenScopedRateThrottle]

    @extend_schema(
        operation_id="games_replay",
        tags=GAMES,
        summary="Full replay of a finished game",
        description="Seed, every move, the deal of every hand and the final state, once the "
        "game is over (409 `game_not_over` before). Its players may read it, and so may the "
        "owners of the bots seated at it; a tournament's games are open to every user. "
        "`?download=1` serves it as a JSON file attachment. Rate limited per user (429 with "
        "`Retry-After`).",
        parameters=[
            GAME_ID,
            OpenApiParameter("download", OpenApiTypes.BOOL, required=False),
            OpenApiParameter(
                "Content-Disposition", str, OpenApiParameter.HEADER,
                description="With `download=1` only.",
                examples=[
                    OpenApiExample("Game 7", value='attachment; filename="uno-game-7.json"')
                ],
                response=[200],
            ),
            RETRY_AFTER,
        ],
        responses={
            200: OpenApiResponse(
                ReplayOut,
                "The whole game, hidden information included.",
                examples=[
                    example(
                        "A tiny made-up finished game", examples.REPLAY,
                        "The deal and the deck are cut short to fit.",
                    ),
                    example("Aborted before the deal", examples.REPLAY_ABORTED),
                ],
            ),
            **error_responses(400, 401, 403, 404, 409, 429, raises=[
                NotAPlayer(), GameNotOver(), ReplayHeld(),
            ]),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        game = game_or_404(id)
        selectors.replay_reader_or_403(game=game, user=request.user)
        response = Response(selectors.game_replay_cached(game=game))
        if query_bool(request.query_params, "download"):
            response["Content-Disposition"] = f'attachment; filename="uno-game-{game.pk}.json"'
        return response

