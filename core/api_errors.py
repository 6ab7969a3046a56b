"""One error body for the whole API: ``{"code": ..., "detail": ..., ...}``.

Every error a client can get (validation, auth, permission, throttling, game rules) is
rendered by ``exception_handler`` in this shape, so a bot needs one code path for failures:
switch on ``code`` (stable, machine-readable), show ``detail`` (human). Some codes add fields:
``fields`` for validation errors (dotted field name -> messages) and ``version`` for a stale
version.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    DisallowedHost,
    ObjectDoesNotExist,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

log = logging.getLogger(__name__)


class ApiError(exceptions.APIException):
    """An API error with a stable code and optional extra fields in the body."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "error"
    default_detail = "The request could not be processed."

    def __init__(
        self,
        detail: str | None = None,
        *,
        code: str | None = None,
        status_code: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail or self.default_detail, code or self.default_code)
        if status_code is not None:
            self.status_code = status_code
        self.code = code or self.default_code
        self.extra = dict(extra or {})


class ErrorSerializer(serializers.Serializer):
    """The body of every error response."""

    code = serializers.CharField(help_text="Stable machine-readable error code.")
    detail = serializers.CharField(help_text="Human-readable explanation.")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation errors only: dotted field name -> messages.",
    )
    version = serializers.IntegerField(
        required=False, help_text="`stale_version` only: the game's current version."
    )


def _flatten(data: Any, prefix: str = "") -> dict[str, list[str]]:
    """Flatten DRF's nested validation errors into ``{"options.stacking": ["..."]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(data, Mapping):
        for key, value in data.items():
            name = str(key) if not prefix else f"{prefix}.{key}"
            if key == "non_field_errors" and prefix == "":
                name = "non_field_errors"
            out.update(_flatten(value, name))
    elif isinstance(data, list) and all(not isinstance(v, Mapping | list) for v in data):
        out[prefix or "non_field_errors"] = [str(v) for v in data]
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out.update(_flatten(value, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out[prefix or "non_field_errors"] = [str(data)]
    return out


def error_body(exc: exceptions.APIException) -> dict[str, Any]:
    """The JSON body for an API exception (used by the handler and by idempotent replays)."""
    if isinstance(exc, ApiError):
        return {"code": exc.code, "detail": str(exc.detail), **exc.extra}
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        first = next(iter(fields.items()), ("", ["Invalid input."]))
        detail = f"{first[0]}: {first[1][0]}" if first[0] != "non_field_errors" else first[1][0]
        return {"code": "invalid", "detail": detail, "fields": fields}
    codes = exc.get_codes()
    code = codes if isinstance(codes, str) else exc.default_code
    return {"code": code, "detail": str(exc.detail)}


class RequestTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"

    def __init__(self) -> None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(f"The request body is larger than the limit of {limit} bytes.")


class DatabaseBusy(ApiError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "database_busy"
    default_detail = "The database is busy: nothing was changed. Try again shortly."

    def __init__(self) -> None:
        super().__init__()
        self.wait = 1  # DRF's handler sends it as Retry-After


class DatabaseUnavailable(ApiError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "database_unavailable"
    default_detail = ("The database could not be reached, or dropped the connection: what was "
                      "asked may or may not have been done. When it is back, send a request "
                      "with an Idempotency-Key (a move) again with the same key: it is done "
                      "once; check first whether anything else was done.")

    def __init__(self) -> None:
        super().__init__()
        self.wait = 2  # DRF's handler sends it as Retry-After


# PostgreSQL's SQLSTATEs of a transaction rolled back for another's sake (nothing was changed:
# try again): lock_not_available (a statement waited ``DB_LOCK_TIMEOUT_SECONDS`` for a row
# lock), serialization_failure, deadlock_detected.
ROLLED_BACK = frozenset({"55P03", "40001", "40P01"})
# ... and of a server out of reach (the outcome of what was asked is unknown): a connection
# exception (class 08), the server shutting down or starting (57P01-57P03), too many
# connections, and the session closed for idling in its transaction.
UNREACHABLE = frozenset({"57P01", "57P02", "57P03", "53300", "25P03"})


def database_error(exc: Exception) -> ApiError | None:
    """The answer to a database error that is not the request's fault nor a bug: 503
    ``database_busy`` (rolled back, send it again) or ``database_unavailable`` (out of reach,
    outcome unknown); None for anything else (a bug, a missing table, a full disk: a logged
    500). Logged with its traceback either way."""
    if not isinstance(exc, DatabaseError):
        return None
    cause = exc.__cause__
    state = getattr(cause, "sqlstate", None)
    if state in ROLLED_BACK or str(cause) == "database is locked":  # SQLite's own busy
        answer: ApiError = DatabaseBusy()
    elif isinstance(exc, InterfaceError) or state in UNREACHABLE or (
            state or "").startswith("08") or (
            state is None and isinstance(exc, OperationalError) and _postgres(cause)):
        answer = DatabaseUnavailable()
    else:
        return None
    log.warning("answered 503 %s: %s", answer.default_code, exc, exc_info=exc)
    return answer


def _postgres(cause: object) -> bool:
    """A psycopg error with no SQLSTATE: the server never answered (connection refused, reset,
    timed out)."""
    return type(cause).__module__.startswith("psycopg")


class BadRequest(ApiError):
    default_code = "bad_request"
    default_detail = "The request is malformed."


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler (headers, rollback) with our body shape."""
    if isinstance(exc, Http404 | ObjectDoesNotExist):
        # ObjectDoesNotExist: e.g. a game deleted while a long poll waited on it.
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):  # DATA_UPLOAD_MAX_MEMORY_SIZE, met reading it
        exc = RequestTooLarge()
    elif isinstance(exc, SuspiciousOperation):  # e.g. too many query parameters
        exc = BadRequest()
    elif (answer := database_error(exc)) is not None:  # busy or out of reach: when to retry
        exc = answer
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    response.data = error_body(exc)
    return response


# --- OpenAPI helpers --------------------------------------------------------------------------
_DESCRIPTIONS = {
    400: "Malformed request (bad JSON, failed validation, malformed move).",
    401: "Missing or invalid credentials.",
    403: "Authenticated but not allowed (e.g. not a player of this game).",
    404: "No such resource.",
    409: "Conflict with the current state (stale version, not your turn, wrong status).",
    422: "Well-formed but refused (illegal move, idempotency key reused).",
    429: "Rate limit hit; retry after the `Retry-After` header's seconds.",
}

_EXAMPLES: dict[int, list[tuple[str, dict[str, Any]]]] = {
    400: [
        (
            "Invalid field",
            {
                "code": "invalid",
                "detail": "options.stacking: must be a boolean",
                "fields": {"options.stacking": ["must be a boolean"]},
            },
        ),
    ],
    401: [("Not authenticated", {"code": "not_authenticated", "detail": "Authentication "
                                 "credentials were not provided."})],
    403: [("Not a player", {"code": "not_a_player", "detail": "You have no seat in this game."})],
    404: [("Not found", {"code": "not_found", "detail": "Not found."})],
    409: [
        (
            "Stale version",
            {
                "code": "stale_version",
                "detail": "The game moved on; fetch the view and decide again.",
                "version": 42,
            },
        ),
        ("Not your turn", {"code": "not_your_turn", "detail": "It is not your turn (waiting "
                           "for seat 1)."}),
        ("Wrong status", {"code": "game_not_open", "detail": "The game has already started "
                          "or ended."}),
    ],
    422: [("Illegal move", {"code": "illegal_move", "detail": "that card does not match"})],
    429: [("Throttled", {"code": "throttled", "detail": "Request was throttled. Expected "
                         "available in 30 seconds."})],
}


# Response header of every 429 (DRF's ``Throttled``); list it in the operation's parameters.
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    description="Seconds to wait before trying again.",
    examples=[OpenApiExample("Thirty seconds", value=30)],
    response=[429],
)


def error_responses(
    *codes: int, raises: Sequence[exceptions.APIException] = ()
) -> dict[int, Any]:
    """OpenAPI responses for the given error statuses, all with the error body.

    ``raises``: errors the operation really answers with (instances, as raised); each becomes
    an example of its status, rendered by ``error_body`` exactly as a client gets it. A
    status with none of them shows a generic example."""
    from drf_spectacular.utils import OpenApiResponse

    out: dict[int, Any] = {}
    for code in codes:
        own = [error_body(exc) for exc in raises if exc.status_code == code]
        examples = [
            OpenApiExample(name, value=value, response_only=True, status_codes=[str(code)])
            for name, value in [(body["code"], body) for body in own] or _EXAMPLES.get(code, [])
        ]
        out[code] = OpenApiResponse(ErrorSerializer, _DESCRIPTIONS[code], examples=examples)
    return out


# --- outside DRF's views ------------------------------------------------------------------------
def json_answer(body: Any, status: int = 200) -> JsonResponse:
    """JSON written as DRF's renderer writes the API's other answers (compact, UTF-8 as is),
    for the few answers made outside DRF's views: one style for a client's every error."""
    return JsonResponse(body, status=status, safe=isinstance(body, dict),
                        json_dumps_params={"separators": (",", ":"), "ensure_ascii": False})


def error_json(status_code: int, code: str, detail: str) -> JsonResponse:
    return json_answer({"code": code, "detail": detail}, status_code)


@csrf_exempt
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Unknown paths under /api/ (and ids that are not numbers) get a JSON 404 too."""
    return error_json(404, "not_found", "No such API endpoint.")


@csrf_exempt
def api_index(request: HttpRequest) -> JsonResponse:
    """``/api/`` itself: where the schema and the docs are, and where each part of the API
    starts (by URL name: core knows no app)."""
    if request.method not in ("GET", "HEAD"):
        response = error_json(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
        response["Allow"] = "GET, HEAD"
        return response
    return json_answer({
        "schema": reverse("schema"),
        "docs": reverse("swagger-ui"),
        "redoc": reverse("redoc"),
        "games": reverse("games"),
        "stream": reverse("stream"),
        "bots": reverse("bots"),
        "tournaments": reverse("tournaments"),
        "leaderboard": reverse("leaderboard"),
        "accounts": reverse("signup"),
        "tokens": reverse("tokens"),
    })


# Django's error views (arena/urls.py names them) for what goes wrong outside DRF's views, with
# DEBUG off: a bad Host header (DisallowedHost), a body over the size limit read before the
# view, an unexpected exception. Under /api/ the answer is the one error body; elsewhere (the
# admin, the home page) Django's own page.
def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        too_large = RequestTooLarge()
        return error_json(too_large.status_code, too_large.code, str(too_large.detail))
    if isinstance(exception, DisallowedHost):
        return error_json(400, "bad_request", "The Host header names no site served here.")
    return error_json(400, BadRequest.default_code, BadRequest.default_detail)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.permission_denied(request, exception)
    return error_json(403, "permission_denied", str(exceptions.PermissionDenied.default_detail))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _is_api(request):
        return defaults.page_not_found(request, exception)
    return error_json(404, "not_found", "Not found.")


def server_error(request: HttpRequest) -> HttpResponse:
    if not _is_api(request):
        return defaults.server_error(request)
    return error_json(500, "server_error", "Internal server error; it has been logged.")
