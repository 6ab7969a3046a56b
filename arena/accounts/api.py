"""Sign-up and API tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from knox.models import AuthToken
from rest_framework import status
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.accounts import examples, services
from arena.accounts.serializers import (
    SignupInput,
    TokenCreatedOut,
    TokenCreateInput,
    TokenOut,
    UserOut,
)
from arena.accounts.throttles import PasswordAttemptThrottle
from core.api_errors import RETRY_AFTER, ApiError, error_responses
from core.authentication import (
    PASSWORD_NOT_ACCEPTED,
    PasswordAuthentication,
    TokenAuthentication,
    password_refused,
    sends_password,
)
from core.throttling import FailOpenScopedRateThrottle

TAGS = ["accounts"]


class SignupClosed(ApiError):
    status_code = status.HTTP_403_FORBIDDEN
    default_code = "signup_closed"
    default_detail = "Sign-up is closed on this server: ask its staff for an account."


class SignupApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]
    throttle_scope = "signup"
    throttle_classes = [FailOpenScopedRateThrottle]

    @extend_schema(
        operation_id="accounts_create",
        tags=TAGS,
        summary="Sign up",
        description=(
            "Create an account; then get a token from `POST /api/tokens/`. A server whose "
            "operator closed sign-up (`ACCOUNTS_SIGNUP_OPEN=false`) answers 403 "
            "`signup_closed`: its staff create accounts in the admin."
        ),
        request=SignupInput,
        parameters=[RETRY_AFTER],
        responses={
            201: OpenApiResponse(
                UserOut,
                "The new account.",
                examples=[OpenApiExample("New account", value=examples.USER)],
            ),
            **error_responses(400, 403, 429, raises=[
                ValidationError({"username": ["A user with that username already exists."]}),
                SignupClosed(),
            ]),
        },
        auth=[],
        examples=[OpenApiExample("Sign up", value=examples.SIGNUP_REQUEST, request_only=True)],
    )
    def post(self, request: Request) -> Response:
        if not settings.ACCOUNTS_SIGNUP_OPEN:
            raise SignupClosed()
        body = SignupInput(data=request.data)
        body.is_valid(raise_exception=True)
        user = services.user_create(**body.validated_data)
        return Response(UserOut(user).data, status=status.HTTP_201_CREATED)


class InvalidCredentials(ApiError):
    status_code = status.HTTP_401_UNAUTHORIZED
    default_code = "authentication_failed"
    default_detail = "Invalid username or password."


class TokenListCreateApi(APIView):
    # Creating a token takes a password (HTTP Basic or in the body) or an existing token.
    # Wrong passwords are refused in ``post``, once the rate limit has counted the attempt.
    authentication_classes = [PasswordAuthentication, TokenAuthentication]

    def get_permissions(self) -> list[Any]:
        return [AllowAny()] if self.request.method == "POST" else super().get_permissions()

    def get_throttles(self) -> list[Any]:
        # Every password sent here counts against the limit: listing with one too, or the
        # list would be a way to guess passwords without it.
        if self.request.method == "POST" or sends_password(self.request):
            self.throttle_scope = "token"
            return [PasswordAttemptThrottle()]
        return []

    def check_permissions(self, request: Request) -> None:
        # A wrong password is refused as that (not "credentials were not provided"), once
        # the rate limit has counted it: DRF checks permissions before throttles.
        if password_refused(request):
            self.check_throttles(request)
            raise InvalidCredentials()
        super().check_permissions(request)

    @extend_schema(
        operation_id="tokens_list",
        tags=TAGS,
        summary="List my tokens",
        description="Prefix (`id`), creation and expiry; never the key. With a token, or a "
        "password (HTTP Basic: it counts against the token rate limit, as when creating one).",
        parameters=[RETRY_AFTER],
        responses={
            200: OpenApiResponse(
                TokenOut(many=True),
                "Your tokens.",
                examples=[OpenApiExample("A token", value=examples.TOKEN)],
            ),
            **error_responses(401, 429, raises=[NotAuthenticated(), InvalidCredentials()]),
        },
    )
    def get(self, request: Request) -> Response:
        return Response(TokenOut(services.token_list(user=request.user), many=True).data)

    @extend_schema(
        operation_id="tokens_create",
        tags=TAGS,
        summary="Create a token",
        description="Authenticate with HTTP Basic, or `username` + `password` in the body, or "
        "an existing token (the new one then expires no later than it). The `key` is shown "
        "only in this response; send it as `Authorization: Token <key>` (or `Bearer <key>`). "
        "Password attempts, right and wrong, count against the rate limit per username and "
        "client address.",
        request=TokenCreateInput,
        parameters=[RETRY_AFTER],
        responses={
            201: OpenApiResponse(
                TokenCreatedOut,
                "The new token.",
                examples=[
                    OpenApiExample("New token", value=examples.TOKEN_CREATED),
                    OpenApiExample("New token for a day", value=examples.TOKEN_CREATED_EXPIRING),
                ],
            ),
            **error_responses(400, 401, 429, raises=[
                ValidationError(
                    {"expires_in": ["Ensure this value is greater than or equal to 60."]}
                ),
                InvalidCredentials(),
            ]),
        },
        examples=[
            OpenApiExample(
                "Password in the body", value=examples.TOKEN_REQUEST_PASSWORD, request_only=True
            ),
            OpenApiExample(
                "HTTP Basic for a day",
                value=examples.TOKEN_REQUEST_BASIC,
                description="Credentials in the `Authorization` header; the body only sets the "
                "lifetime (or send no body at all).",
                request_only=True,
            ),
        ],
        auth=[{"basicAuth": []}, {"tokenAuth": []}, {}],
    )
    def post(self, request: Request) -> Response:
        body = TokenCreateInput(data=request.data)
        body.is_valid(raise_exception=True)
        user = request.user if request.user.is_authenticated else None
        if user is None:
            user = authenticate(
                request._request,
                username=body.validated_data.get("username", ""),
                password=body.validated_data.get("password", ""),
            )
        if user is None:
            raise InvalidCredentials()
        caller = request.auth if isinstance(request.auth, AuthToken) else None
        record, key = services.token_create(
            user=user, expires_in=body.validated_data.get("expires_in"),
            not_after=caller.expiry if caller is not None else None,
        )
        out = {**TokenOut(record).data, "key": key}
        return Response(out, status=status.HTTP_201_CREATED)


class TokenDetailApi(APIView):
    @extend_schema(
        operation_id="tokens_destroy",
        tags=TAGS,
        summary="Revoke a token",
        parameters=[OpenApiParameter("id", str, OpenApiParameter.PATH, description="Token id.")],
        responses={204: None, **error_responses(401, 404, raises=[
            NotAuthenticated(), AuthenticationFailed(PASSWORD_NOT_ACCEPTED),
        ])},
    )
    def delete(self, request: Request, id: str) -> Response:
        if not services.token_revoke(user=request.user, token_id=id):
            raise Http404("No such token.")
        return Response(status=status.HTTP_204_NO_CONTENT)
