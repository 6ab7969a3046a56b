"""Waiting requests that hold no thread while they wait (``view?wait=``, ``events?wait=``,
``moves?wait=`` as served by ``arena.serving``'s ASGI side).

A waiting view is the same DRF view as on a WSGI server (same parsing, authentication, errors,
answers), run in three kinds of step:

1. ``dispatch``, on a thread of ``WAIT_THREADS``: DRF's own dispatch. Where the synchronous view
   would block, the handler returns a ``Suspended`` answer instead: what it waits for and how
   to go on;
2. the wait itself, on the event loop: the game's changes come from ``games.listen``'s hub (one
   PostgreSQL LISTEN per process, and this process's commits), subscribed before step 1 read
   the game, so nothing committed in between is missed;
3. ``Suspended.resume``, on a thread again, through DRF's exception handling and response
   finishing: the answer, or another ``Suspended`` (the change was not yet the one waited for).

A waiting request holds a slot (``games.waits``: per user, and thousands per process) from
its handler's ``hold_slot`` to its answer; a thread only while it reads or writes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.views import APIView

from games import clock, listen, services, waits
from games.models import Game
from games.notify import Change

log = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None


def _threads() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(settings.WAIT_THREADS, thread_name_prefix="uno-wait")
    return _executor


def _step(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One step of a waiting request on a pool thread: like a request of its own, it leaves
    its thread's database connection as Django's request end would (kept unless broken or
    too old)."""
    try:
        return function(*args, **kwargs)
    finally:
        close_old_connections()


async def in_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``function`` on one of the ``WAIT_THREADS`` threads (their database connections
    persist, like gunicorn's threads')."""
    run = sync_to_async(_step, thread_sensitive=False, executor=_threads())
    return await run(function, *args, **kwargs)


class Suspended(HttpResponse):
    """What a waiting handler answers instead of blocking: wait for a change of ``game_id``
    that ``wanted`` accepts (or one that says nothing: read) until the monotonic ``deadline``,
    then call ``resume`` with it (None: the wait ran out) on a thread, for the answer or
    another ``Suspended``. ``version`` and ``turn_deadline`` are the game's as last read:
    the wait re-reads when the turn clock runs out, and now and then if the process hears no
    other process's changes (no LISTEN)."""

    def __init__(
        self,
        *,
        game_id: int,
        version: int,
        deadline: float,
        turn_deadline: datetime | None,
        wanted: Callable[[Change], bool],
        resume: Callable[[Change | None], HttpResponseBase],
    ) -> None:
        super().__init__(status=200)
        self.game_id, self.version, self.deadline = game_id, version, deadline
        self.turn_deadline, self.wanted, self.resume = turn_deadline, wanted, resume


class WaitingApiView(APIView):
    """A DRF view served asynchronously; its handlers run on a thread and may answer
    ``Suspended``. Subclasses name the game in the URL's ``id``."""

    view_is_async = True
    _slot_user: object = None
    _holding = False

    def hold_slot(self, user_id: object, wait: float) -> bool:
        """Take a wait slot until the answer; False over a cap (or without a wait)."""
        self._holding = waits.take_async(user_id, wait)
        self._slot_user = user_id
        return self._holding

    async def dispatch(  # type: ignore[override]
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        hub = await listen.hub()
        try:
            # Subscribed before the handler reads the game: whatever commits after the read
            # is queued for the wait.
            async with hub.subscribe([kwargs["id"]]) as changes:
                response = await in_thread(super().dispatch, request, *args, **kwargs)
                while isinstance(response, Suspended):
                    change = await self._until_change(response, changes, hub)
                    response = await in_thread(self._resume, response, change)
                return response
        finally:
            if self._holding:
                self._holding = False
                waits.release_async(self._slot_user)

    async def _until_change(
        self, suspended: Suspended, changes: listen.Subscription, hub: listen.Hub
    ) -> Change | None:
        from games.selectors import LONG_POLL_RECHECK

        while (left := suspended.deadline - clock.monotonic()) > 0:
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

    def _resume(self, suspended: Suspended, change: Change | None) -> HttpResponseBase:
        """``suspended.resume`` as DRF's dispatch runs a handler: errors become their API
        answers, and the response is finished the same way."""
        try:
            response = suspended.resume(change)
        except Exception as exc:
            response = self.handle_exception(exc)
        return self.finalize_response(self.request, response, *self.args, **self.kwargs)


def _changed(suspended: Suspended) -> bool:
    """Whether the game moved on unheard (or its overdue turn clock was settled now)."""
    if services.turn_clock_enforce(game_id=suspended.game_id):
        return True
    current = Game.objects.filter(pk=suspended.game_id).values_list("version", flat=True)
    with contextlib.suppress(Game.DoesNotExist):
        return bool(current.get() != suspended.version)
    return True
