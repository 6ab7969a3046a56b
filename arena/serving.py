"""How a web process serves (docs/scaling.md has the measurements behind it).

``arena.asgi.application`` runs under uvicorn (gunicorn with ``arena.workers.Worker``, one
event loop per process) and sends each request one of two ways:

* a waiting request (``view``, ``events`` or ``moves`` with a ``wait`` above zero, and the
  stream under ``/api/stream/``) goes to Django's ASGI handler with ``arena.wait_urls``: it
  waits on the event loop, holding a socket and a little memory but no thread, and does its
  database work on ``WAIT_THREADS`` threads (``games.waiting``);
* everything else goes to the WSGI application (``arena.wsgi``) on ``WEB_THREADS`` threads,
  exactly as gunicorn's gthread workers ran it. Django's ASGI handler runs a synchronous view
  on a new thread per request (a new database connection each): the request/response API lost
  four fifths of its speed that way (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest, HttpResponseBase
from django.urls import set_script_prefix

from games import stream_api, waiting

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

WAITING_PATH = re.compile(r"/api/games/([0-9]+)/(?:view|events|moves)/")
STREAM_PREFIX = "/api/stream/"
WAIT_URLCONF = "arena.wait_urls"


def is_waiting(path: str, query_string: bytes) -> bool:
    """Whether a request may wait: the stream, or a waiting endpoint asked to wait."""
    if path.startswith(STREAM_PREFIX):
        return True
    if not WAITING_PATH.fullmatch(path):
        return False
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if name == "wait":
            try:
                return float(value) > 0  # anything else: the usual view's 400 or no wait
            except ValueError:
                return False
    return False


class WaitingHandler(ASGIHandler):
    """Django's ASGI handler resolving with ``arena.wait_urls``, for what ``Router`` sends it:
    the waiting endpoints, served by ``games.waiting.serve`` with Django's synchronous
    handling (one thread hop per step), and anything under ``/api/stream/`` the same way (one
    step: a stream's start, then the stream is sent from the loop; or the error answer)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = BaseHandler()
        self.steps.load_middleware(is_async=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Django's, without its ``ThreadSensitiveContext``. That context gives each request a
        thread of its own for its synchronous parts (the request signals, the middleware's
        hooks, the response's close), kept until the request ends: an open stream held one,
        idle, for as long as it was open (50 streams, 50 more threads in the process). Those
        parts run on asgiref's one shared thread instead; no database work is done there
        (a stream's is on ``games.waiting``'s threads)."""
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A waiting endpoint's request or a stream, as Django's ``handle`` does it (a client
        that goes away cancels its wait, or its stream), but with the request's signals sent
        by its first and last steps on their threads (``step``) instead of on threads of
        their own: four thread hops fewer a request. Sent on the event loop instead, their
        receivers (which look after the thread's database connections) found nothing to do
        there, and cost the loop about a tenth of its time under the API bench."""
        found = WAITING_PATH.fullmatch(scope["path"])  # else: under /api/stream/ (``Router``)
        try:
            body = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error = self.create_request(scope, body)
        if request is None:
            signals.request_started.send(sender=self.__class__, scope=scope)
            response: HttpResponseBase | None = error
        else:
            request.urlconf = WAIT_URLCONF  # type: ignore[attr-defined]
            if found is None:
                # Not given up if the client goes meanwhile: a stream's start takes its
                # user's slot, which only the stream's end gives back.
                response = await waiting.in_thread(self.step, request)
            else:
                response = await _unless_gone(
                    waiting.serve(request, int(found.group(1)), self.step),
                    self.listen_for_disconnect(receive),
                )
        if isinstance(response, stream_api.StreamStart):
            await self._stream(stream_api.streaming(response), receive, send)
        elif response is None:  # the client went away: no step finished the request
            signals.request_finished.send(sender=self.__class__)
        else:
            with contextlib.suppress(OSError):
                await self.send_response(response, send)
            # An answer made on the loop (``WaitingApiView.answered``) finishes the request
            # here, as a stream's end does: no step on a thread did.
            finished = request is not None and not getattr(response, "answered_on_loop", False)
            _close_unsignalled(response, finished=finished)
        body.close()

    async def _stream(self, response: HttpResponseBase, receive: Receive, send: Send) -> None:
        """Send a stream until it ends or its client goes away (which cancels it, ending its
        events' generator), then finish the request as Django does."""
        with contextlib.suppress(OSError):
            await _unless_gone(self.send_response(response, send),
                               self.listen_for_disconnect(receive))
        response.close()  # request_finished, on the loop: the stream's thread work is done

    def step(self, request: HttpRequest) -> HttpResponseBase:
        """One step of a waiting request or a stream's start, on a thread: Django's
        synchronous handling, after ``request_started`` if it is the first (``serve`` sets
        ``resumed`` for the others), and followed by ``request_finished`` if it answers (not
        a ``GoesOn``: a wait, a stream). The answer is complete by then (a waiting endpoint's
        answers are not streamed), so the receivers (the thread's database connections
        checked, caches closed, URLconf reset) do what they would after it was sent."""
        if not hasattr(request, "resumed"):
            signals.request_started.send(sender=self.__class__, scope=request.scope)
        response = self.steps.get_response(request)
        if not isinstance(response, waiting.GoesOn):
            signals.request_finished.send(sender=self.__class__)
        return response


async def _unless_gone(
    answer: Coroutine[Any, Any, HttpResponseBase], gone: Coroutine[Any, Any, None]
) -> HttpResponseBase | None:
    """``answer``'s response, or None if ``gone`` ends first (the client went away: the
    answer is cancelled, its wait and slot released)."""
    answering, listening = asyncio.ensure_future(answer), asyncio.ensure_future(gone)
    await asyncio.wait([answering, listening], return_when=asyncio.FIRST_COMPLETED)
    for task in (listening, answering):
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, RequestAborted):
            await task
    return None if answering.cancelled() else answering.result()


def _close_unsignalled(response: HttpResponseBase, *, finished: bool) -> None:
    """``response.close()``, without sending ``request_finished`` again if a step has sent it
    (``finished``): its resources closed as Django's ``close`` does (``_resource_closers``,
    as Django keeps them since 3.0)."""
    closers = getattr(response, "_resource_closers", None)
    if not finished or closers is None:
        response.close()
        return
    for closer in closers:
        with contextlib.suppress(Exception):
            closer()
    closers.clear()
    response.closed = True


class Router:
    def __init__(self, waiting: Asgi, others: Asgi) -> None:
        self.waiting, self.others = waiting, others

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "http" and not is_waiting(scope["path"], scope.get("query_string", b"")):
            await self.others(scope, receive, send)
        else:
            await self.waiting(scope, receive, send)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def terminated(app: Callable[..., Any]) -> Callable[..., Any]:
    """The ASGI server decodes a chunked body and marks its end: tell ``arena.wsgi``'s
    ``ChunkedBodies`` it may read it (as under gunicorn)."""

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        environ["wsgi.input_terminated"] = True
        return app(environ, start_response)

    return wsgi
