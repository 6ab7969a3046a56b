"""Playing: the view and the move, the two requests a bot sends on every turn. The hot path
(``bench/api.py`` measures it): the usual body and query are read by hand, anything unusual
goes through the serializers for their exact errors."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from django.http import HttpResponse, HttpResponseBase
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import generics, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.utils.encoders import JSONEncoder
from rest_framework.views import APIView

from core.api_errors import RETRY_AFTER, error_body, error_responses
from core.strict import MAX_PAGE, StrictPageNumberPagination
from core.throttling import FailOpenScopedRateThrottle
from games import clock, examples, notify, selectors, services, waits
from games import uno as engine
from games.api import example, game_or_404, request_example
from games.errors import (
    GameNotRunning,
    IdempotencyKeyReused,
    IllegalMoveError,
    MalformedMoveError,
    NotAPlayer,
    NotYourTurn,
    SeatForfeited,
    StaleVersion,
)
from games.idempotency import idempotent_call, request_fingerprint
from games.models import Game, GameStatus, MoveRecord, Seat
from games.schema import GAME_ID, IDEMPOTENCY_KEY, etag_header
from games.serializers import (
    MoveInput,
    MovePlayedOut,
    MoveQuery,
    MoveRecordOut,
    ViewOut,
    ViewQuery,
)

PLAY = ["play"]


class MovePagination(StrictPageNumberPagination):
    example_url = "https://uno.example.org/api/games/7/moves/"
    page_size = 200
    max_page_size = 1000


class GameViewApi(APIView):
    @extend_schema(
        operation_id="games_view",
        tags=PLAY,
        summary="My view of the game",
        description="The rules engine's view for your seat (your hand, everyone's card "
        "counts, top card, whose decision is awaited, your legal moves) plus the game's "
        "`version` to send with your move. Sends an `ETag`; with `If-None-Match` you get a "
        "304 until something changes. Add `wait` (seconds, up to 25) to hold the request "
        "until something changes: the cheapest way for a bot to wait for its turn. Waiting "
        "requests are capped per user in each server process, and per process (not across "
        "the server): over a cap, a `wait` is a 429 `too_many_waits` with `Retry-After`.",
        parameters=[
            GAME_ID,
            ViewQuery,
            OpenApiParameter("If-None-Match", str, OpenApiParameter.HEADER, required=False),
            etag_header(200, 304),
            RETRY_AFTER,
        ],
        responses={
            200: OpenApiResponse(
                ViewOut,
                "Your view.",
                examples=[example("Your turn", examples.VIEW_EXAMPLE)],
            ),
            304: OpenApiResponse(description="Not modified since the ETag you sent."),
            **error_responses(400, 401, 403, 404, 429, raises=[
                ValidationError({"wait": ["Ensure this value is less than or equal to 25."]}),
                NotAPlayer(),
                waits.TooManyWaits(),
            ]),
        },
    )
    def get(self, request: Request, id: int) -> HttpResponse:
        wait, until_turn = _wait_query(ViewQuery, request)
        known = _if_none_match(request)
        with waits.slot_or_429(request.user.pk, wait):
            seat = selectors.seat_view_wait(
                game_id=id, user=request.user, known=known, wait=wait, until_turn=until_turn
            )
        return view_response(seat, known)


def view_response(seat: Seat, known: list[str]) -> HttpResponse:
    """The seat's view (with its ETag), or 304 if the client holds it already."""
    game = seat.game
    etag = selectors.view_etag(game=game, seat=seat.index)
    if etag in known or "*" in known:  # "*": any view you have (RFC 9110)
        response = HttpResponse(status=status.HTTP_304_NOT_MODIFIED)
        response["ETag"] = etag
        return response
    response = Response(_view_body(game, seat.index))
    response["ETag"] = etag
    return response


# What a bot sends with every request: no query, or a plain ``wait`` (and ``until``).
_USUAL_WAIT = re.compile(r"[0-9]{1,2}(?:\.[0-9]{1,6})?")


def _wait_query(serializer: type[ViewQuery | MoveQuery], request: Request) -> tuple[float, bool]:
    """``wait`` and ``until == "turn"`` of a view or a move. The usual query is read by hand
    (a DRF serializer costs more than the rest of a move's input handling); anything else
    goes through ``serializer`` for its exact errors."""
    params = request.query_params
    wait, until = params.get("wait", "0"), params.get("until", "change")
    if (
        params.keys() <= {"wait", "until"}
        and until in ("change", "turn")
        and _USUAL_WAIT.fullmatch(wait)
        and (seconds := float(wait)) <= selectors.LONG_POLL_MAX_SECONDS
    ):
        return seconds, until == "turn"
    query = serializer(data=params)
    query.is_valid(raise_exception=True)
    return query.validated_data["wait"], query.validated_data["until"] == "turn"


def _usual_move_body(data: Any) -> tuple[int, dict[str, Any]] | None:
    """(version, move) of the usual body, ``{"version": n, "move": {...}}`` with a flat move
    of strings, whole numbers and booleans, read by hand; None for anything else (a float
    such as ``1e400``, which parses as infinity, a nested value, ...), which ``MoveInput``
    then judges (exact errors)."""
    if (
        type(data) is dict
        and len(data) == 2
        and type(version := data.get("version")) is int
        and version >= 0
        and type(move := data.get("move")) is dict
        and all(type(value) in _FLAT for value in move.values())
    ):
        return version, move
    return None


_FLAT = (str, int, bool)


def _if_none_match(request: Request) -> list[str]:
    # META, not ``request.headers``: that parses every header on first use, for the one needed.
    header = request.META.get("HTTP_IF_NONE_MATCH", "")
    return [tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()]


def _view_body(game: Game, seat: int, view: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "game": game.pk,
        "version": game.version,
        "seat": seat,
        "status": game.status,
        "turn_deadline": game.turn_deadline,
        "view": selectors.game_view(game=game, seat=seat) if view is None else view,
    }


class GameMovesApi(generics.GenericAPIView):
    pagination_class = MovePagination
    serializer_class = MoveRecordOut
    queryset = MoveRecord.objects.none()  # for the schema; reads go through the selector

    def get_throttles(self) -> list[BaseThrottle]:
        # Only playing is rate limited; reading the public log is not.
        if self.request.method == "POST":
            self.throttle_scope = "move"
            return [FailOpenScopedRateThrottle()]
        return []

    @extend_schema(
        operation_id="games_moves_list",
        tags=PLAY,
        summary="The public move log",
        parameters=[
            GAME_ID,
            # A plain GET handler: the paginator's parameters are not found on their own.
            OpenApiParameter(
                "page", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                description="Page number (from 1); a page past the end is a 404.",
            ),
            OpenApiParameter(
                "page_size",
                {"type": "integer", "minimum": 1, "maximum": MovePagination.max_page_size},
                description=f"Moves per page (default {MovePagination.page_size}).",
            ),
        ],
        description="Every move so far, oldest first. Moves carry no hidden information. "
        "A page past the end is a 404.",
        responses={
            200: OpenApiResponse(
                MoveRecordOut(many=True),
                "A page of the move log.",
                examples=[example("A move", examples.MOVE_RECORD)],
            ),
            **error_responses(400, 401, 404),
        },
    )
    def get(self, request: Request, id: int) -> Response:
        game = game_or_404(id)
        page = self.paginate_queryset(selectors.move_list(game=game))
        return self.get_paginated_response(MoveRecordOut(page, many=True).data)

    @extend_schema(
        operation_id="games_moves_create",
        tags=PLAY,
        summary="Play a move",
        description=(
            "Send the move with the `version` your decision was based on.\n\n"
            "* 201: applied; the body is your new view plus the move record.\n"
            "* 409 `stale_version`: the game moved on (body has the current `version`); "
            "fetch the view and decide again.\n"
            "* 409 `not_your_turn`: another seat is awaited. Out-of-turn moves (`catch`, "
            "`uno`, and jump-in `play`s with that option) go through the same endpoint.\n"
            "* 422 `illegal_move`: the rules forbid it (`detail` says why).\n"
            "* 400 `malformed_move` / `invalid`: not a move at all.\n\n"
            "With an `Idempotency-Key` header a retried request returns the first response "
            "instead of playing twice; the same key with a different request is a 422 "
            "`idempotency_key_reused`. (A replayed response is the view right after the move, "
            "without any `wait`.)\n\n"
            "With `wait`, the answer comes when the game changes again after your move (or "
            "when the wait ends), carrying your view at that version: a bot can play a whole "
            "game with one request per move. If the next decision is yours anyway (a Skip, "
            "a drawn card to play or keep) it answers at once. Over a cap on waiting "
            "requests (per user in each server process, and per process) the move is played "
            "and answered at once, without waiting."
        ),
        parameters=[
            GAME_ID,
            MoveQuery,
            IDEMPOTENCY_KEY,
            etag_header(201),
            OpenApiParameter(
                "Idempotent-Replayed", str, OpenApiParameter.HEADER, enum=["true"],
                description="Present on the recorded response a retried `Idempotency-Key` "
                "gets back (only played moves are recorded).",
                response=[201],
            ),
            RETRY_AFTER,
        ],
        request=MoveInput,
        responses={
            201: OpenApiResponse(
                MovePlayedOut,
                "The move was applied: your view (at the version the `ETag` names) and the "
                "move's record (`played`).",
                examples=[
                    example("Played a red five", examples.MOVE_PLAYED, "Right after the move."),
                    example(
                        "Played and waited", examples.MOVE_PLAYED_AND_WAITED,
                        "With `?wait=25&until=turn`: the view once rival has replied.",
                    ),
                ],
            ),
            **error_responses(400, 401, 403, 404, 409, 422, 429, raises=[
                MalformedMoveError("unknown card code 'R99'"),
                ValidationError({"version": ["This field is required."]}),
                NotAPlayer(),
                StaleVersion(42),
                NotYourTurn("It is not your turn (waiting for seat 1)."),
                GameNotRunning(),
                SeatForfeited(),
                IllegalMoveError("R5 does not match the top card (G7, green)"),
                IdempotencyKeyReused(),
            ]),
        },
        examples=[
            request_example("Play a red five", examples.MOVE_REQUEST_PLAY),
            request_example("Wild choosing green", examples.MOVE_REQUEST_WILD),
            request_example("Penultimate card with an Uno call", examples.MOVE_REQUEST_UNO),
            request_example("Draw", examples.MOVE_REQUEST_DRAW),
            request_example("Catch seat 1 (missed Uno)", examples.MOVE_REQUEST_CATCH),
        ],
    )
    def post(self, request: Request, id: int) -> HttpResponseBase:
        wait, until_turn = _wait_query(MoveQuery, request)
        # The version the move was decided on names the game as this process last showed it,
        # which then needs no read (any other body is validated in full later).
        hint = request.data.get("version") if isinstance(request.data, dict) else None
        seat = selectors.seat_with_game(
            game_id=id, user=request.user, version=hint if type(hint) is int else None
        )
        with self._waiting(request.user.pk, id, wait) as changes:
            key = request.META.get("HTTP_IDEMPOTENCY_KEY")  # (see _if_none_match)
            if key is None:  # an empty one is refused, not ignored (idempotency._check_key)
                played = self._play(request, id, seat)
                return self._waited(request, played, seat, wait, until_turn, changes)
            return self._play_idempotent(request, id, seat, key, wait, until_turn, changes)

    @contextlib.contextmanager
    def _waiting(
        self, user_id: object, game_id: int, wait: float
    ) -> Iterator[notify.Subscription | None]:
        """The move's wait slot and the game's changes (None: answer at once)."""
        # Subscribed before the move, so a reply committed right after it still wakes us.
        with (
            waits.slot(user_id, wait) as allowed,
            # Over a cap the move is played all the same, and answered at once.
            notify.subscription(game_id) if wait and allowed else contextlib.nullcontext()
            as changes,
        ):
            yield changes

    def _play_idempotent(
        self,
        request: Request,
        game_id: int,
        seat: Seat,
        key: str,
        wait: float,
        until_turn: bool,
        changes: notify.Subscription | None,
    ) -> HttpResponseBase:
        moves: list[services.MovePlayed] = []

        def produce() -> tuple[int, Any]:
            # A refusal is answered, not raised: what the services committed before refusing
            # (an overdue clock's move) stands. It is not remembered (``idempotent_call``).
            try:
                played = self._play(request, game_id, seat)
            except APIException as exc:
                return exc.status_code, error_body(exc)
            moves.append(played)
            # Plain JSON, so a replayed response is the same JSON as the first one.
            body = _played_body(played, seat.index)
            return status.HTTP_201_CREATED, json.loads(json.dumps(body, cls=JSONEncoder))

        fingerprint = request_fingerprint(
            method=request.method or "POST", path=request.path, body=request.data
        )
        status_code, body, replayed = idempotent_call(
            user=request.user, key=key, fingerprint=fingerprint, game_id=game_id, produce=produce
        )
        if moves and not replayed:  # played now: wait like any move
            return self._waited(request, moves[0], seat, wait, until_turn, changes, body)
        response = _move_response(body, status_code)
        if replayed:
            response["Idempotent-Replayed"] = "true"
        return response

    def _waited(
        self,
        request: Request,
        played: services.MovePlayed,
        seat: Seat,
        wait: float,
        until_turn: bool,
        changes: notify.Subscription | None,
        played_body: dict[str, Any] | None = None,
    ) -> HttpResponseBase:
        body = self._wait(request, played, seat, wait, until_turn, changes, played_body)
        return _move_response(body, status.HTTP_201_CREATED)

    def _wait(
        self,
        request: Request,
        played: services.MovePlayed,
        seat: Seat,
        wait: float,
        until_turn: bool,
        changes: notify.Subscription | None,
        played_body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Play-and-wait: after the move, hold the answer until the game changes again (with
        ``until_turn``: until the decision is the mover's again or the game ends), unless the
        decision is already the mover's again (a Skip, a drawn card to play or keep).

        The answer is the mover's view at the version it ends on; the view right after the
        move (``played_body``, else made from the move's own state) only when nothing
        followed, so a bot's usual answer costs one view, not two."""
        game = played.game
        found = None
        if changes is not None and game.status == GameStatus.RUNNING and (
            game.awaiting != seat.index
        ):
            found = selectors.seat_wait(
                seat=seat, game=game, user=request.user, changes=changes,
                known=[selectors.view_etag(game=game, seat=seat.index)], until_turn=until_turn,
                deadline=clock.monotonic() + min(wait, selectors.LONG_POLL_MAX_SECONDS),
            )
        return waited_body(played, seat.index, found, played_body)

    def _play(self, request: Request, game_id: int, seat: Seat) -> services.MovePlayed:
        usual = _usual_move_body(request.data)
        if usual is None:
            body = MoveInput(data=request.data)
            body.is_valid(raise_exception=True)
            usual = body.validated_data["version"], body.validated_data["move"]
        version, move = usual
        return services.move_play(
            game_id=game_id,
            seat=seat.index,
            move=move,
            expected_version=version,
            seen=seat.game,
            player=request.user.pk,
        )


def waited_body(
    played: services.MovePlayed,
    seat: int,
    found: Seat | None,
    played_body: dict[str, Any] | None,
) -> dict[str, Any]:
    """A play-and-wait's answer: the mover's view at the version the wait ended on
    (``found``), or the view right after the move (``played_body``, else made from the
    move's own state) when nothing followed."""
    if found is not None and found.game.version != played.game.version:
        return {**_view_body(found.game, found.index), "played": _record_out(played.record)}
    return played_body if played_body is not None else _played_body(played, seat)

def _played_body(played: services.MovePlayed, seat: int) -> dict[str, Any]:
    """The mover's view right after the move, from the state it produced (nothing is read
    back), with the move's record."""
    view = engine.view(played.state, seat)
    return {**_view_body(played.game, seat, view), "played": _record_out(played.record)}


def _record_out(record: MoveRecord) -> dict[str, Any]:
    """``MoveRecordOut``'s fields, built directly: on every move, the serializer's field
    machinery cost more than the rest of the answer (the schema test checks the shape)."""
    return {
        "number": record.number,
        "version": record.version,
        "seat": record.seat,
        "move": record.move,
        "source": record.source,
        "created_at": record.created_at,
    }


def _move_response(body: Any, status_code: int) -> Response:
    response = Response(body, status=status_code)
    if status_code == status.HTTP_201_CREATED:
        # The body is the mover's view at the new version: its ETag lets the client long-poll
        # (`view?wait=` with If-None-Match) without fetching the same view again.
        response["ETag"] = selectors.etag(
            game_id=body["game"], version=body["version"], seat=body["seat"]
        )
    return response

