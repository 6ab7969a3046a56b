"""Waiting requests that hold no thread while they wait (``view?wait=``, ``events?wait=``,
``moves?wait=`` as served by ``arena.serving``'s ASGI side).

A waiting request is the same DRF view as on a WSGI server (same middleware, parsing,
authentication, errors, answers), served by ``serve`` in steps:

1. on a thread of ``WAIT_THREADS``, Django's synchronous handler (middleware and view, in one
   hop: Django's asynchronous middleware would cost a thread hop per middleware and phase).
   Where the blocking view would wait, the handler answers ``Suspended`` instead: what it
   waits for and how to go on;
2. the wait itself, on the event loop: the game's changes come from ``games.listen``'s hub (one
   PostgreSQL LISTEN per process, and this process's commits), subscribed before step 1 read
   the game, so nothing committed in between is missed;
3. on a thread again, the same handler once more, whose view (``resumable``) now goes on with
   ``Suspended.resume``: the answer, through the middleware like any, or another
   ``Suspended`` (the change was not yet the one waited for). Unless the change carries all
   the answer needs (the game's row at that version, kept by this process or heard with the
   NOTIFY): then ``Suspended.answer_now`` makes the answer on the event loop, with no thread,
   no query and no second pass through the middleware (``WaitingApiView.answered``).

A waiting request holds a slot (``games.waits``: per user, and thousands per process) from its
handler's ``hold_slot`` to its answer; a thread only while it reads or writes. A client that
goes away ends its wait at once (Django's ASGI handler cancels it), slot and all.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from rest_framework.views import APIView

from core.threadpool import ThreadPool
from games import clock, listen, services, waits
from games.models import Game
from games.notify import Change

log = logging.getLogger(__name__)

_pool: ThreadPool | None = None


def _threads() -> ThreadPool:
    global _pool
    if _pool is None:
        _pool = ThreadPool(settings.WAIT_THREADS, "uno-wait", on_exit=connections.close_all)
    return _pool


def _step(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One step of a waiting request on a pool thread. Each step checks its thread's database
    connection before its first query, as a request's start does (a poll of the socket,
    core.postgresql): a step that resumes a wait is no request's start, and its connection
    may have died while the wait was suspended (PostgreSQL restarted, the backend killed); it
    was used unchecked, and a move already committed was answered 503. After its last step
    (an answer, or an error), the connection is left as Django's request end leaves it (kept
    unless broken or too old)."""
    for conn in connections.all(initialized_only=True):
        conn.health_check_done = False
    done = True
    try:
        result = function(*args, **kwargs)
        done = not isinstance(result, Suspended)
        return result
    finally:
        if done:
            close_old_connections()


async def in_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``function`` on one of the ``WAIT_THREADS`` threads (their database connections
    persist, like gunicorn's threads'), with this task's context. A ``core.threadpool``, not
    asgiref's ``sync_to_async``, whose wrapping cost the event loop a tenth of its time on a
    busy server (the wake-ups of streams queue behind it), nor an executor (four times the
    CPU a hop)."""
    return await _threads().run(functools.partial(_step, function, *args, **kwargs))


def _resumed(suspended: Suspended, change: Change | None) -> HttpResponseBase:
    """``suspended.resume(change)``, once more on a new connection if the database dropped
    the one it used. A resumed wait reads (and at most settles a turn clock, by compare-and-
    set), so a second try is safe; its thread's connection is checked at each step (``_step``),
    but a backend killed a moment before can still look alive to that check (its goodbye not
    yet on the socket). Anything else, or a second failure, is the request's error."""
    try:
        return suspended.resume(change)
    except DatabaseError:
        if not any(conn.errors_occurred for conn in connections.all(initialized_only=True)):
            raise
        close_old_connections()  # the broken connection goes: the retry opens a new one
        return suspended.resume(change)


class GoesOn(HttpResponse):
    """An answer a step on a thread gives the event loop to go on with (a wait, a stream),
    after the middleware has seen it: not the request's end."""


class Suspended(GoesOn):
    """What a waiting handler answers instead of blocking: wait for a change of ``game_id``
    that ``wanted`` accepts (or one that says nothing: read) until the monotonic ``deadline``,
    then call ``resume`` with it (None: the wait ran out) on a thread, for the answer or
    another ``Suspended``. ``version`` and ``turn_deadline`` are the game's as last read:
    the wait re-reads when the turn clock runs out, and now and then if the process hears no
    other process's changes (no LISTEN)."""

    def __init__(
        self,
        *,
        view: WaitingApiView,
        game_id: int,
        version: int,
        deadline: float,
        turn_deadline: datetime | None,
        wanted: Callable[[Change], bool],
        resume: Callable[[Change | None], HttpResponseBase],
        answer_now: Callable[[Change], HttpResponseBase | None] | None = None,
    ) -> None:
        super().__init__(status=200)
        self.view, self.game_id, self.version = view, game_id, version
        self.deadline, self.turn_deadline = deadline, turn_deadline
        self.wanted, self.resume, self.answer_now = wanted, resume, answer_now


class WaitingApiView(APIView):
    """A DRF view whose handlers may answer ``Suspended`` (served by ``serve``)."""

    def hold_slot(self, user_id: object, wait: float) -> bool:
        """Take a wait slot until the answer; False over a cap (or without a wait)."""
        if not waits.take_async(user_id, wait):
            return False
        self.request._request.wait_slot = user_id  # type: ignore[attr-defined]
        return True

    def holds_slot(self) -> bool:
        return hasattr(self.request._request, "wait_slot")

    def suspend(self, **wait: Any) -> Suspended:
        return Suspended(view=self, **wait)

    def resume(self, suspended: Suspended, change: Change | None) -> HttpResponseBase:
        """``suspended.resume`` as DRF's dispatch runs a handler: errors become their API
        answers, and the response is finished the same way."""
        try:
            response = _resumed(suspended, change)
        except Exception as exc:
            response = self.handle_exception(exc)
        response = self.finalize_response(self.request, response, *self.args, **self.kwargs)
        return _with_first_steps_headers(response, suspended)

    def answered(self, suspended: Suspended, change: Change | None) -> HttpResponseBase | None:
        """The answer to ``change`` made on the event loop (``suspended.answer_now``), or None
        to resume on a thread. It is what the thread would answer: the same handler code
        makes it, DRF finishes and renders it as in ``resume``, and the middleware's part is
        the headers and cookies it gave ``suspended`` (the same request's response, which
        went through every middleware in step 1; none of them looks at a JSON body). Only a
        JSON answer: the browsable API's page renders a template that sets a CSRF cookie. A
        failure here is logged and the thread answers instead."""
        if suspended.answer_now is None or change is None or change.version is None:
            return None
        renderer = getattr(self.request, "accepted_renderer", None)
        if renderer is None or renderer.format != "json":
            return None  # the browsable API's page: its template, CSRF cookie and all
        try:
            response = suspended.answer_now(change)
            if response is None:
                return None
            response = self.finalize_response(self.request, response, *self.args, **self.kwargs)
            if hasattr(response, "render"):
                response.render()
        except Exception:
            log.warning("answering game %s on the event loop failed; on a thread instead",
                        suspended.game_id, exc_info=True)
            return None
        response = _with_first_steps_headers(response, suspended)
        response["Content-Length"] = str(len(response.content))  # CommonMiddleware's
        response.cookies = suspended.cookies
        response.answered_on_loop = True  # type: ignore[attr-defined]  (no step finished it)
        return response


def _with_first_steps_headers(
    response: HttpResponseBase, suspended: Suspended
) -> HttpResponseBase:
    """``response`` with the headers the same request's first step was given and it lacks:
    DRF's (``finalize_response`` hands the view's ``Vary`` out once, to that first response)
    and the middleware's (which, on a thread, would give the same ones again). Not those of
    the body, which the first response did not have."""
    for header, value in suspended.items():
        if header.lower() not in _OWN_HEADERS and header not in response:
            response[header] = value
    return response


# What an answer keeps of its own instead of taking the suspended response's (which had no
# body).
_OWN_HEADERS = frozenset({"content-type", "content-length", "etag"})


def resumable(view_class: type[WaitingApiView]) -> Callable[..., HttpResponseBase]:
    """``view_class`` as a view function that goes on with a suspended request (``serve``
    sets ``request.resumed``) instead of starting over."""
    view = view_class.as_view()

    def handle(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        resumed: tuple[Suspended, Change | None] | None = getattr(request, "resumed", None)
        if resumed is None:
            return view(request, *args, **kwargs)
        suspended, change = resumed
        return suspended.view.resume(suspended, change)

    handle.cls = view_class  # type: ignore[attr-defined]  (as DRF's views have it)
    return csrf_exempt(handle)


async def serve(
    request: HttpRequest, game_id: int, handler: Callable[[HttpRequest], HttpResponseBase]
) -> HttpResponseBase:
    """Answer a waiting request: ``handler`` (Django's synchronous request handling) on a
    thread, the waits on the event loop, as the module's docstring says."""
    hub = await listen.hub()
    try:
        # Subscribed before the handler reads the game: whatever commits after the read is
        # queued for the wait.
        async with hub.subscribe([game_id]) as changes:
            response = await in_thread(handler, request)
            while isinstance(response, Suspended):
                change = await _until_change(response, changes, hub)
                answered = response.view.answered(response, change)
                if answered is not None:
                    return answered
                request.resumed = (response, change)  # type: ignore[attr-defined]
                response = await in_thread(handler, request)
            return response
    finally:
        user_id = request.__dict__.pop("wait_slot", None)
        if user_id is not None:
            waits.release_async(user_id)


async def _until_change(
    suspended: Suspended, changes: listen.Subscription, hub: listen.Hub
) -> Change | None:
    from games.selectors import LONG_POLL_RECHECK

    while (left := suspended.deadline - clock.monotonic()) > 0:
        if hub.draining:  # the server is stopping: answer as if the wait ran out
            return None
        timeout = left
        if suspended.turn_deadline is not None:
            timeout = min(timeout, (suspended.turn_deadline - clock.now()).total_seconds())
        if not hub.listening:  # other processes' changes are not heard: look now and then
            timeout = min(timeout, LONG_POLL_RECHECK)
        heard = await clock.next_change(changes, max(0.01, timeout))
        if heard is not None:
            game_id, change = heard
            if game_id == listen.RESYNC or change.version is None:
                return Change()
            if suspended.wanted(change):
                return change
            continue
        if clock.monotonic() < suspended.deadline and await in_thread(_changed, suspended):
            return Change()
    return None


def _changed(suspended: Suspended) -> bool:
    """Whether the game moved on unheard (or its overdue turn clock was settled now). A
    failure (the database gone) says yes: the request goes on through Django's handling,
    which answers it as any request's error."""
    try:
        if services.turn_clock_enforce(game_id=suspended.game_id):
            return True
        current = Game.objects.filter(pk=suspended.game_id).values_list("version", flat=True)
        return bool(current.get() != suspended.version)
    except Exception:
        log.warning("re-reading game %s during a wait failed", suspended.game_id, exc_info=True)
        return True
