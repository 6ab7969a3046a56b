"""The bots REST API: register bots, see their profiles, and (owners) their secrets, stats,
call log and verification. Thin views over ``bots.services`` and ``bots.selectors``."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bots import examples, selectors, services, verify
from bots.errors import BotDisabled, BotEntered, BotSeated, NotBotOwner, VerificationRunning
from bots.filters import OUTCOMES, CallFilter
from bots.models import Bot, BotCall, CallKind
from bots.serializers import (
    BotCallOut,
    BotCreatedOut,
    BotCreateInput,
    BotDetailOut,
    BotOut,
    BotPublicOut,
    BotStatsOut,
    BotUpdateInput,
    SecretOut,
    VerificationOut,
    stats_data,
)
from core.api_errors import RETRY_AFTER, error_responses
from core.strict import StrictPageNumberPagination, no_body, query_bool
from core.throttling import FailOpenScopedRateThrottle

BOTS = ["bots"]
BOT_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Bot id.")
_BAD_URL = ValidationError({"url": ["The URL must not carry a user name or password."]})
_TAKEN = ValidationError({"name": [services.NAME_TAKEN]})
# What an operation that takes no body answers to one with fields (``no_body``): a client that
# sends its own secret to rotate-secret, say, expecting it to be set.
_NO_BODY = ValidationError({"secret": ["Unknown field."]})


def _example(name: str, value: Any, description: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, description=description)


def _request_example(name: str, value: Any) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


class BotPagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/bots/"


class CallPagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/bots/3/calls/"
    max_page_size = 500


def _owned_out(bot: Bot) -> dict[str, Any]:
    return BotOut(bot).data


class BotListCreateApi(generics.ListAPIView):
    serializer_class = BotPublicOut
    pagination_class = BotPagination
    filter_backends: list[Any] = []

    def get_queryset(self) -> QuerySet[Bot]:
        mine = query_bool(self.request.query_params, "mine")
        return selectors.bot_list(mine=mine, user=self.request.user)

    @extend_schema(
        operation_id="bots_list",
        tags=BOTS,
        summary="List bots",
        description="Every bot's public profile, by name; `mine=true` for your own.",
        parameters=[OpenApiParameter("mine", OpenApiTypes.BOOL, required=False)],
        responses={
            200: OpenApiResponse(BotPublicOut(many=True), "A page of bots.",
                                 examples=[_example("A bot", examples.PUBLIC)]),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="bots_create",
        tags=BOTS,
        summary="Register a bot",
        description="The answer carries the bot's signing `secret`, shown this once: keep "
        "it. The server signs every call to the bot with it (Standard Webhooks). See "
        "docs/bot-protocol.md for what the bot receives and answers.",
        request=BotCreateInput,
        responses={
            201: OpenApiResponse(BotCreatedOut, "The new bot, with its secret.",
                                 examples=[_example("Registered", examples.CREATED)]),
            **error_responses(400, 401, raises=[_BAD_URL, _TAKEN]),
        },
        examples=[_request_example("A bot", examples.CREATE_REQUEST)],
    )
    def post(self, request: Request) -> Response:
        body = BotCreateInput(data=request.data)
        body.is_valid(raise_exception=True)
        bot, secret = services.bot_create(owner=request.user, **body.validated_data)
        return Response({**_owned_out(bot), "secret": secret}, status=status.HTTP_201_CREATED)


class BotDetailApi(APIView):
    @extend_schema(
        operation_id="bots_retrieve",
        tags=BOTS,
        summary="A bot",
        description="Its public profile; its owner also gets the URL, whether it is enabled "
        "and its last verification (never the secret).",
        parameters=[BOT_ID],
        responses={
            200: OpenApiResponse(BotDetailOut, "The bot. Someone else's bot has only the "
                                 "public fields: id, name, owner, description, verified, "
                                 "created_at.",
                                 examples=[_example("Yours", examples.OWNED),
                                           _example("Someone else's", examples.PUBLIC)]),
            **error_responses(401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        bot = selectors.bot_get(bot_id=id)
        if bot.owner_id == request.user.pk:
            return Response(_owned_out(bot))
        return Response(BotPublicOut(bot).data)

    @extend_schema(
        operation_id="bots_update",
        tags=BOTS,
        summary="Change a bot",
        description="Owner only. A new `url` clears the verification.",
        parameters=[BOT_ID],
        request=BotUpdateInput,
        responses={
            200: OpenApiResponse(BotOut, "The changed bot.",
                                 examples=[_example("New URL", examples.OWNED)]),
            **error_responses(400, 401, 403, 404, raises=[_BAD_URL, _TAKEN, NotBotOwner()]),
        },
        examples=[_request_example("A new URL", examples.UPDATE_REQUEST)],
    )
    def patch(self, request: Request, id: int) -> Response:
        bot = selectors.bot_owned(bot_id=id, user=request.user)
        body = BotUpdateInput(data=request.data)
        body.is_valid(raise_exception=True)
        return Response(_owned_out(services.bot_update(bot=bot, data=body.validated_data)))

    @extend_schema(
        operation_id="bots_destroy",
        tags=BOTS,
        summary="Delete a bot",
        description="Owner only, and only a bot that never took a seat (409 `bot_seated`: "
        "disable it instead, its games keep their history) and is entered in no tournament "
        "(409 `bot_entered`: withdraw it from a draft first; a started tournament keeps its "
        "entrants).",
        parameters=[BOT_ID],
        responses={
            204: OpenApiResponse(description="Deleted."),
            **error_responses(401, 403, 404, 409,
                              raises=[NotBotOwner(), BotSeated(), BotEntered()]),
        },
    )
    def delete(self, request: Request, id: int) -> Response:
        services.bot_delete(bot=selectors.bot_owned(bot_id=id, user=request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)


class BotRotateSecretApi(APIView):
    @extend_schema(
        operation_id="bots_rotate_secret",
        tags=BOTS,
        summary="Rotate the signing secret",
        description="Owner only. A new secret, shown this once. Until `previous_secret_until` "
        "every call carries two signatures (new and old secret) in `webhook-signature`, so "
        "the bot can switch over without missing a call. A rotation keeps only the secret it "
        "replaces: after a second one, the first secret no longer signs anything.",
        parameters=[BOT_ID],
        request=None,
        responses={
            200: OpenApiResponse(SecretOut, "The new secret.",
                                 examples=[_example("Rotated", examples.SECRET)]),
            **error_responses(400, 401, 403, 404, raises=[_NO_BODY, NotBotOwner()]),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        no_body(request)
        bot = selectors.bot_owned(bot_id=id, user=request.user)
        secret = services.bot_rotate_secret(bot=bot)
        bot.refresh_from_db(fields=["previous_secret_until"])
        until = bot.previous_secret_until
        return Response({"secret": secret, "previous_secret_until": until,
                         "previous_valid_until": until})


class BotVerifyApi(APIView):
    # Each verification holds a request thread for its game: so many an hour per user, and
    # one at a time (``verify.one_at_a_time``).
    throttle_scope = "verify"
    throttle_classes = [FailOpenScopedRateThrottle]

    @extend_schema(
        operation_id="bots_verify",
        tags=BOTS,
        summary="Verify a bot",
        description="Owner only. Checks the signature handshake (a correctly signed notice "
        "is accepted; one signed with a wrong secret, one with no signature headers and one "
        "signed 10 minutes ago are each refused with a 4xx) and plays a single-hand "
        "validation game against a reference player, every decision over HTTP: it passes "
        "once the bot has made 20 decisions in time, as JSON and legal (or the game ended "
        "sooner). The result and the reasons for a failure are stored on the bot. Only "
        "verified, enabled bots may enter tournaments. Takes as long as those decisions (a "
        "second for a quick bot, at most 20 budgets). A disabled bot is not verified: 409 "
        "`bot_disabled`, its last verdict kept, not counted against the hourly limit. One at "
        "a time per user (429 `verification_running`), and so many an hour (429 with "
        "`Retry-After`).",
        parameters=[BOT_ID, RETRY_AFTER],
        request=None,
        responses={
            200: OpenApiResponse(VerificationOut, "The verdict (also when it failed).",
                                 examples=[_example("Passed", examples.VERIFIED),
                                           _example("Failed", examples.VERIFY_FAILED)]),
            **error_responses(400, 401, 403, 404, 409, 429,
                              raises=[_NO_BODY, NotBotOwner(), BotDisabled(verify.DISABLED),
                                      VerificationRunning()]),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        no_body(request)
        bot = selectors.bot_owned(bot_id=id, user=request.user)
        with verify.one_at_a_time(request.user.pk):
            return Response(verify.verify(bot_id=bot.pk))

    def check_throttles(self, request: Request) -> None:
        # A request that cannot start a verification (not the owner's bot, a disabled bot)
        # is refused before the hourly limit counts it.
        bot = selectors.bot_owned(bot_id=self.kwargs["id"], user=request.user)
        if not bot.enabled:
            raise BotDisabled(verify.DISABLED)
        super().check_throttles(request)


class BotStatsApi(APIView):
    @extend_schema(
        operation_id="bots_stats",
        tags=BOTS,
        summary="A bot's latency, failures and strikes",
        description="Owner only. p50/p99 latency over the recent turn calls, and the counts "
        "of calls, failures by kind and strikes by reason since the bot was registered.",
        parameters=[BOT_ID],
        responses={
            200: OpenApiResponse(BotStatsOut, "The aggregates.",
                                 examples=[_example("A busy bot", examples.STATS)]),
            **error_responses(401, 403, 404, raises=[NotBotOwner()]),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        bot = selectors.bot_owned(bot_id=id, user=request.user)
        return Response(stats_data(bot, selectors.counters(bot=bot),
                                   selectors.latency(bot=bot)))


class BotCallsApi(generics.GenericAPIView):
    serializer_class = BotCallOut
    pagination_class = CallPagination
    queryset = BotCall.objects.none()  # for the schema; reads go through the selector
    filter_backends = [DjangoFilterBackend]
    filterset_class = CallFilter

    @extend_schema(
        operation_id="bots_calls",
        tags=BOTS,
        summary="A bot's recent calls",
        description="Owner only. Newest first: turns, notices and verification calls, each "
        "with its HTTP status, latency, error kind and what the server did (`outcome`: "
        "`move`, `strike`, `stale`, `clock`). The log keeps the most recent calls only. "
        "Filter by `game`, `kind`, `outcome` and `failed=true` (calls with an error kind).",
        parameters=[
            BOT_ID,
            OpenApiParameter("page", {"type": "integer", "minimum": 1}),
            OpenApiParameter("page_size", {"type": "integer", "minimum": 1,
                                           "maximum": CallPagination.max_page_size}),
            # The filters (bots.filters.CallFilter); named here, as this view is no list view
            # to drf-spectacular's django-filter support.
            OpenApiParameter("game", {"type": "integer", "minimum": 1},
                             description="Only the calls of this game."),
            OpenApiParameter("kind", {"type": "string", "enum": list(CallKind.values)},
                             description="Only calls of this kind."),
            OpenApiParameter("outcome", {"type": "string", "enum": [v for v, _ in OUTCOMES]},
                             description="Only calls with this outcome."),
            OpenApiParameter("failed", OpenApiTypes.BOOL, required=False,
                             description="Only the failed calls (true), or only the others."),
        ],
        responses={
            200: OpenApiResponse(BotCallOut(many=True), "A page of calls.",
                                 examples=[_example("A move", examples.CALL),
                                           _example("A timeout", examples.CALL_FAILED)]),
            **error_responses(400, 401, 403, 404, raises=[NotBotOwner()]),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        bot = selectors.bot_owned(bot_id=id, user=request.user)
        page = self.paginate_queryset(self.filter_queryset(selectors.call_list(bot=bot)))
        return self.get_paginated_response(BotCallOut(page, many=True).data)
