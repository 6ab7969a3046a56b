"""The waiting endpoints as served without a thread per wait (``arena.serving`` routes every
request with a ``wait`` here, through ``games.waiting.serve``): the same views as
``games.api`` / ``games.play_api`` (same schema, parsing, errors and answers), whose waits are
``games.waiting.Suspended`` instead of a blocked thread."""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError
from django.http import HttpResponseBase
from rest_framework.request import Request

from games import clock, notify, rows, selectors, services, steps, waits
from games.api import GameEventsApi, events_response
from games.models import Game, GameStatus, Seat
from games.play_api import (
    GameMovesApi,
    GameViewApi,
    _if_none_match,
    _move_response,
    _wait_query,
    view_response,
    waited_body,
)
from games.serializers import EventsQuery, ViewQuery
from games.waiting import Suspended, WaitingApiView

log = logging.getLogger(__name__)


def _deadline(wait: float) -> float:
    return clock.monotonic() + min(wait, selectors.LONG_POLL_MAX_SECONDS)


class GameViewWaitApi(WaitingApiView, GameViewApi):
    def get(self, request: Request, id: int) -> HttpResponseBase:
        wait, until_turn = _wait_query(ViewQuery, request)
        known = _if_none_match(request)
        if wait > 0 and not self.hold_slot(request.user.pk, wait):
            raise waits.TooManyWaits()
        seat = selectors.seat_with_game(game_id=id, user=request.user)
        if wait <= 0:
            return view_response(seat, known)
        return self._until(request, seat, known, until_turn, _deadline(wait))

    def _until(
        self, request: Request, seat: Seat, known: list[str], until_turn: bool, deadline: float
    ) -> HttpResponseBase:
        """``selectors.seat_wait``'s loop, one turn per change."""
        game = seat.game
        if not selectors.still_waiting(game, seat.index, known, until_turn):
            return view_response(seat, known)

        def resume(change: notify.Change | None) -> HttpResponseBase:
            if change is None:  # the wait ran out: the view as last read
                return view_response(seat, known)
            again = selectors.seat_with_game(
                game_id=game.pk, user=request.user, version=change.version
            )
            return self._until(request, again, known, until_turn, deadline)

        def answer_now(change: notify.Change) -> HttpResponseBase | None:
            found = _seat_now(seat, change, known, until_turn)
            return None if found is None else view_response(found, known)

        return _suspend(self, game, deadline,
                        selectors.wanted_change(game, seat.index, until_turn), resume,
                        answer_now)


class GameEventsWaitApi(WaitingApiView, GameEventsApi):
    def get(self, request: Request, id: int) -> HttpResponseBase:
        query = EventsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        since, wait = query.validated_data["since"], query.validated_data["wait"]
        # A missing game is a DoesNotExist (a 404) from the read below.
        services.turn_clock_enforce(game_id=id)  # a read settles an overdue clock
        if wait > 0 and not self.hold_slot(request.user.pk, wait):
            raise waits.TooManyWaits()
        game = selectors.version_game(game_id=id)
        if wait <= 0:
            return events_response(id, selectors.events_page(game=game, since=since))
        return self._until(game, since, _deadline(wait))

    def _until(self, game: Game, since: int, deadline: float) -> HttpResponseBase:
        if selectors.events_ready(game=game, since=since):
            return events_response(game.pk, selectors.events_page(game=game, since=since))

        def resume(change: notify.Change | None) -> HttpResponseBase:
            if change is None:
                return events_response(game.pk, selectors.events_page(game=game, since=since))
            return self._until(selectors.version_game(game_id=game.pk), since, deadline)

        return _suspend(self, game, deadline, lambda change: True, resume)


class GameMovesWaitApi(WaitingApiView, GameMovesApi):
    @contextlib.contextmanager
    def _waiting(
        self, user_id: object, game_id: int, wait: float
    ) -> Iterator[notify.Subscription | None]:
        # Over a cap the move is played all the same, and answered at once. The changes come
        # from the hub, subscribed by ``dispatch`` before the move.
        if wait > 0:
            self.hold_slot(user_id, wait)
        yield None

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
        """Play-and-wait (``GameMovesApi._wait``) without a thread."""
        game = played.game
        held = self.holds_slot()
        if not held or game.status != GameStatus.RUNNING or game.awaiting == seat.index:
            return _answer(played, seat, None, played_body)
        known = [selectors.view_etag(game=game, seat=seat.index)]
        return self._until(request, played, seat, game, None, known, until_turn,
                           _deadline(wait), played_body)

    def _until(
        self,
        request: Request,
        played: services.MovePlayed,
        seat: Seat,
        game: Game,
        found: Seat | None,
        known: list[str],
        until_turn: bool,
        deadline: float,
        played_body: dict[str, Any] | None,
    ) -> HttpResponseBase:
        if not selectors.still_waiting(game, seat.index, known, until_turn):
            return _answer(played, seat, found, played_body)

        def resume(change: notify.Change | None) -> HttpResponseBase:
            if change is None:
                return _answer(played, seat, found, played_body)
            try:
                again = selectors.seat_with_game(
                    game_id=game.pk, user=request.user, version=change.version
                )
                return self._until(request, played, seat, again.game, again, known,
                                   until_turn, deadline, played_body)
            except DatabaseError:  # the move is committed: never answered as an error
                log.warning("game %s: a play-and-wait's read failed; answered with the move "
                            "as if its wait had run out", game.pk, exc_info=True)
                return _answer(played, seat, found, played_body)

        def answer_now(change: notify.Change) -> HttpResponseBase | None:
            found = _seat_now(seat, change, known, until_turn)
            return None if found is None else _answer(played, seat, found, played_body)

        return _suspend(self, game, deadline,
                        selectors.wanted_change(game, seat.index, until_turn), resume,
                        answer_now)


def _seat_now(
    seat: Seat, change: notify.Change, known: list[str], until_turn: bool
) -> Seat | None:
    """The seat with its game at ``change``'s version, when this process has that row without
    the database (``rows.game_heard``) and it ends the wait; None: resume on a thread (which
    reads, settles an overdue turn clock, or waits on). Safe on the event loop. The seat is
    the one the request's first step read, so only if its game was running then: a running
    game's seats keep their players (at an open table the user may have left the seat, and
    someone else taken it, meanwhile: the thread reads who sits there now). A view reads only
    the game and the seat's index."""
    assert change.version is not None
    if seat.game.status != GameStatus.RUNNING:
        return None
    game = rows.game_heard(seat.game_id, change.version, change.row)
    if game is None or steps.turn_clock_overdue(game):
        return None
    if selectors.still_waiting(game, seat.index, known, until_turn):
        return None
    found = copy.copy(seat)
    Seat.game.field.set_cached_value(found, game)
    return found


def _answer(
    played: services.MovePlayed,
    seat: Seat,
    found: Seat | None,
    played_body: dict[str, Any] | None,
) -> HttpResponseBase:
    return _move_response(waited_body(played, seat.index, found, played_body), 201)


def _suspend(
    view: WaitingApiView, game: Game, deadline: float, wanted: Any, resume: Any,
    answer_now: Any = None,
) -> Suspended:
    return view.suspend(
        game_id=game.pk, version=game.version, deadline=deadline,
        turn_deadline=game.turn_deadline, wanted=wanted, resume=resume, answer_now=answer_now,
    )
