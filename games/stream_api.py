"""``GET /api/stream/``: one long response per player carrying every event of every game they
sit in (``games.stream`` says which, and how a reconnect resumes), NDJSON or Server-Sent
Events. Its start is one synchronous step on a thread (``stream_start``); the stream is sent
from the event loop (``streaming``): an open stream costs a socket and a little memory, no
thread. A WSGI server (runserver) serves it with ``stream_view``, a thread a stream.

Each event loop (one per server process under ASGI) has one ``Router``: ONE subscription to
every game's changes on the loop's ``games.listen`` hub, fanned out to the open streams of the
users seated at the changed game (seats read once per game, then cached), so a move wakes its
game's players' streams and nobody else's. A woken stream reads what it needs (the game's
rows, the seat's view) on the waiting requests' threads (``games.waiting.in_thread``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core.api_errors import (
    RETRY_AFTER,
    database_error,
    error_body,
    error_json,
    error_responses,
    json_answer,
)
from games import clock, listen, rows, stream, waiting
from games.models import GameStatus
from games.notify import Change
from games.schema_stream import CURSOR_PATTERN, STREAM_EXAMPLES, StreamEventSchema

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2
# Rows not yet settled (see games.stream): looked at again this soon, then less often.
HELD_FIRST_SECONDS = 0.01
HELD_MAX_SECONDS = 1.0
# Without the LISTEN connection (PostgreSQL, reconnecting) other processes' changes are not
# heard: every stream reads its games this often meanwhile.
UNHEARD_RECHECK_SECONDS = 1.0
# A stream's queue of changes; past it, one full read instead.
STREAM_QUEUE = 1000
# Seats of this many games are kept per process.
SEATS_CACHED = 20_000
# A followed game's turn clock is settled this long after its deadline, unless a worker (or
# anyone's read) did it first.
CLOCK_GRACE_SECONDS = 0.2
# SSE: how long an EventSource waits before reconnecting, in milliseconds.
SSE_RETRY_MS = 2000


class TooManyStreams(exceptions.Throttled):
    default_code = "too_many_streams"
    default_detail = (
        "Too many streams are open at once (yours, or this server's); close one, or ask again "
        "after Retry-After seconds."
    )

    def __init__(self) -> None:
        super().__init__(wait=RETRY_AFTER_SECONDS, detail=self.default_detail)


class BadCursor(exceptions.ValidationError):
    pass


# Where a cursor comes from, named so in a 400: the one the client sent.
SINCE, LAST_EVENT_ID = "since", "Last-Event-ID"
NOT_A_CURSOR = 'An event id from this stream, like "5407-81".'
CURSOR_AHEAD = (
    "Ahead of this stream: no event has had this id yet (an id from another server, or from "
    "before its database was replaced). Connect without it to start afresh."
)


def _db(function: Any) -> Any:
    """``function`` run on one of the waiting requests' threads (``games.waiting``: their
    database connections persist, and are checked before reuse)."""

    async def run(*args: Any, **kwargs: Any) -> Any:
        return await waiting.in_thread(function, *args, **kwargs)

    return run


class Listener:
    """One open stream's inbox: the changes of its user's games, as the router hands them."""

    def __init__(self, user_id: int) -> None:
        self.user_id = user_id
        self.items: deque[tuple[int, int, Change]] = deque()
        self.everything = False  # overflowed or resynced: read every game
        self.arrived = listen.Doorbell()

    def push(self, game_id: int, seat: int, change: Change) -> None:
        if len(self.items) >= STREAM_QUEUE:
            self.items.clear()
            self.everything = True
        else:
            self.items.append((game_id, seat, change))
        self.arrived.ring()

    def resync(self) -> None:
        self.everything = True
        self.arrived.ring()

    async def next(self, timeout: float) -> bool:
        """True when something arrived (take it with ``take``), False at the timeout."""
        return bool(self.items or self.everything) or await self.arrived.wait(timeout)

    def take(self) -> tuple[list[tuple[int, int, Change]], bool]:
        items, everything = list(self.items), self.everything
        self.items.clear()
        self.everything = False
        return items, everything


class Router:
    """This loop's fan-out from game changes to open streams, and the caps on them."""

    def __init__(self, hub: listen.Hub) -> None:
        self.hub = hub
        self.by_user: dict[int, set[Listener]] = {}
        # game id -> (status when read, seated users: user id -> seat)
        self.seats: OrderedDict[int, tuple[str, dict[int, int]]] = OrderedDict()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name="uno-stream")

    def add(self, user_id: int) -> Listener:
        """A listener for one of the user's streams (its slot taken by ``take_slot``)."""
        listener = Listener(user_id)
        self.by_user.setdefault(user_id, set()).add(listener)
        return listener

    def remove(self, listener: Listener) -> None:
        mine = self.by_user.get(listener.user_id)
        if mine is not None and listener in mine:
            mine.discard(listener)
            if not mine:
                del self.by_user[listener.user_id]

    async def _run(self) -> None:
        async with self.hub.subscribe(None, at_once=self._route_at_once) as changes:
            while True:
                item = await changes.next(3600)
                if item is None:
                    continue
                try:
                    await self._route(*item)
                except Exception:  # a failed read: the streams re-read everything instead
                    log.warning("stream routing failed; streams re-read", exc_info=True)
                    self._resync_all()

    async def _route(self, game_id: int, change: Change) -> None:
        if game_id == listen.RESYNC:
            self._resync_all()
        elif not self._route_at_once(game_id, change):
            self._push(game_id, change, await self._seated(game_id))

    def _route_at_once(self, game_id: int, change: Change) -> bool:
        """A change whose seats are known, routed as it is heard (the hub's ``at_once``);
        False leaves it to ``_route`` (a read, a resync)."""
        if game_id == listen.RESYNC:
            return False
        if not self.by_user:
            self.seats.pop(game_id, None)  # nobody to tell; seats may change unseen
            return True
        seated = self._cached(game_id, change)
        if seated is None:
            return False
        self._push(game_id, change, seated)
        return True

    def _push(self, game_id: int, change: Change, seated: dict[int, int]) -> None:
        for user_id, seat in seated.items():
            for listener in self.by_user.get(user_id, ()):
                listener.push(game_id, seat, change)
        if change.status in (GameStatus.FINISHED, GameStatus.ABORTED):
            self.seats.pop(game_id, None)

    def _cached(self, game_id: int, change: Change) -> dict[int, int] | None:
        """The game's seated users as cached, if they still hold: seats only change while a
        game is open, and every change of a game is heard here."""
        cached = self.seats.get(game_id)
        if cached is None or cached[0] == GameStatus.OPEN or change.status == GameStatus.OPEN:
            return None
        self.seats.move_to_end(game_id)
        return cached[1]

    async def _seated(self, game_id: int) -> dict[int, int]:
        """Users seated at the game, read (and cached: ``_cached``)."""
        status, seated = await _db(rows.game_seat_users)(game_id)
        self.seats[game_id] = (status, seated)
        while len(self.seats) > SEATS_CACHED:
            self.seats.popitem(last=False)
        return seated

    def _resync_all(self) -> None:
        self.seats.clear()
        for listeners in self.by_user.values():
            for listener in listeners:
                listener.resync()


_routers: dict[asyncio.AbstractEventLoop, Router] = {}


async def router() -> Router:
    """This loop's router, started on first use."""
    hub = await listen.hub()
    loop = asyncio.get_running_loop()
    for closed in [each for each in _routers if each.is_closed()]:
        del _routers[closed]
    found = _routers.get(loop)
    if found is None or found.hub is not hub:
        found = _routers[loop] = Router(hub)
    found.start()
    return found


# The caps count every stream of the process, whichever loop serves it (one under ASGI; one
# per stream under a WSGI server, the embedded default's runserver).
_slots_lock = threading.Lock()
_open_by_user: Counter[int] = Counter()


def take_slot(user_id: int) -> None:
    """Count a new stream of the user's, or refuse it (429 ``too_many_streams``)."""
    with _slots_lock:
        total = sum(_open_by_user.values())
        if total >= settings.STREAM_MAX_PER_PROCESS or (
            _open_by_user[user_id] >= settings.STREAM_MAX_PER_USER
        ):
            raise TooManyStreams()
        _open_by_user[user_id] += 1


def release_slot(user_id: int) -> None:
    with _slots_lock:
        _open_by_user[user_id] -= 1
        if _open_by_user[user_id] <= 0:
            del _open_by_user[user_id]


def open_streams() -> int:
    """Streams open in this process."""
    with _slots_lock:
        return sum(_open_by_user.values())


# --- the view ------------------------------------------------------------------------------
def _authenticate(request: HttpRequest) -> Any:
    """The user, as DRF's authentication classes (the API's) find it."""
    authenticators = [cls() for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
    drf = Request(request, authenticators=authenticators)
    user = drf.user
    if not user or not user.is_authenticated:
        raise exceptions.NotAuthenticated()
    return user


def _error(exc: exceptions.APIException) -> HttpResponse:
    body = error_body(exc)  # the API's error body, ``fields`` and all
    response = json_answer(body, exc.status_code)
    if isinstance(exc, exceptions.Throttled):
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    elif getattr(exc, "wait", None) is not None:  # the database busy or out of reach
        response["Retry-After"] = str(exc.wait)  # type: ignore[attr-defined]
    if exc.status_code == 401:
        response["WWW-Authenticate"] = 'Token realm="api"'
    return response


def _cursor_of(request: HttpRequest) -> tuple[stream.Cursor | None, str]:
    """``since`` or, failing it, ``Last-Event-ID`` (an EventSource resends the last id), and
    which of the two it came from."""
    unknown = set(request.GET) - {SINCE}
    if unknown:
        raise exceptions.ValidationError({sorted(unknown)[0]: ["Unknown query parameter."]})
    if request.GET.get(SINCE) == "":  # given empty: a 400, as every query parameter's is
        raise BadCursor({SINCE: ["This field may not be blank."]})
    source = SINCE if SINCE in request.GET else LAST_EVENT_ID
    text = request.GET.get(SINCE) or request.META.get("HTTP_LAST_EVENT_ID", "")
    if not text:
        return None, source
    cursor = stream.Cursor.parse(text)
    if cursor is None:
        raise BadCursor({source: [NOT_A_CURSOR]})
    return cursor, source


def _refuse_ahead(cursor: stream.Cursor | None, source: str) -> None:
    """A 400 for a cursor this server never handed out (``stream.ahead``): taken, it would
    answer 200 and silently skip every event below it."""
    if cursor is not None and stream.ahead(cursor):
        raise BadCursor({source: [CURSOR_AHEAD]})


def _wants_sse(request: HttpRequest) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return stream.SSE in accept and stream.NDJSON not in accept


class StreamStart(waiting.GoesOn):
    """A stream that may open (its user authenticated, its slot taken, its cursor parsed),
    with the stream's headers: the waiting side (``arena.serving``) answers it on its event
    loop as ``streaming(start)``, after its one synchronous step (the middleware and
    ``stream_start``) on a thread. Django's asynchronous handling took about a dozen thread
    hops for the middleware's hooks instead (docs/scaling.md)."""

    def __init__(self, *, user_id: int, since: stream.Cursor | None, sse: bool) -> None:
        super().__init__(content_type=stream.SSE if sse else stream.NDJSON)
        self["Cache-Control"] = "no-cache"
        self["X-Accel-Buffering"] = "no"  # nginx passes each event on at once
        self.user_id, self.since, self.sse = user_id, since, sse


def stream_start(request: HttpRequest) -> HttpResponse:
    """The stream's synchronous part: a ``StreamStart``, or the error answer (405, 400, 401,
    429) with the user's slot not taken."""
    if request.method != "GET":
        response = error_json(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
        response["Allow"] = "GET"
        return response
    try:
        since, source = _cursor_of(request)
        user = _authenticate(request)
        _refuse_ahead(since, source)  # a read: for a user only
        take_slot(user.pk)
    except exceptions.APIException as exc:
        return _error(exc)
    except DatabaseError as exc:  # read outside DRF's handling: answered as it would be
        answer = database_error(exc)
        if answer is None:
            raise
        return _error(answer)
    return StreamStart(user_id=user.pk, since=since, sse=_wants_sse(request))


def streaming(start: StreamStart, body: Any = None) -> StreamingHttpResponse:
    """The stream ``start`` opens, with the headers and cookies the middleware gave
    ``start``: ``body``, or the events read on the event loop that serves it."""
    response = StreamingHttpResponse(
        _events(start.user_id, start.since, start.sse) if body is None else body)
    for name, value in start.items():
        if name.lower() != "content-length":  # the start's empty body's (CommonMiddleware)
            response[name] = value
    response.cookies = start.cookies
    return response


async def stream_view(request: HttpRequest) -> HttpResponse:
    """The stream on a WSGI server (runserver), where it holds a thread with a loop of its
    own. (Under ``arena.asgi`` the waiting side serves it: ``stream_start``, ``streaming``.)"""
    start = await _db(stream_start)(request)
    if not isinstance(start, StreamStart):
        return start
    return streaming(start, _on_own_loop(start.user_id, start.since, start.sse))


def _on_own_loop(user_id: int, since: stream.Cursor | None, sse: bool) -> Iterator[bytes]:
    """``_events`` for a WSGI server, which iterates a response in its request's thread:
    driven on an event loop of this thread's own (an asynchronous iterator would be read to
    its end before anything is sent)."""
    loop = asyncio.new_event_loop()
    events = _events(user_id, since, sse)
    try:
        while True:
            yield loop.run_until_complete(events.__anext__())
    finally:
        loop.run_until_complete(events.aclose())
        pending = asyncio.all_tasks(loop)  # this loop's router and hub go with it
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


async def _events(user_id: int, since: stream.Cursor | None, sse: bool) -> AsyncIterator[bytes]:
    """The stream's bytes until the client goes (the server cancels this then). The user's
    slot is taken; it is given back at the end."""
    encode = stream.sse if sse else stream.ndjson
    # From the settings: ``connections[...]`` here would build a database wrapper for this
    # stream's context (asgiref's Local is per task), some hundred objects the garbage
    # collector then scans for as long as the stream is open.
    postgres = listen.on_postgresql()
    try:
        routes = await router()
    except BaseException:
        release_slot(user_id)
        raise
    listener = routes.add(user_id)
    try:
        # Listening before the first read: a change committed after it is then heard.
        state, first = await _db(stream.open_stream)(user_id=listener.user_id, since=since)
        if sse:
            yield f"retry: {SSE_RETRY_MS}\n\n".encode()
        yield b"".join(encode(event) for event in first) or encode(stream.heartbeat(state))
        loop = asyncio.get_running_loop()
        recheck = HeldRecheck()
        recheck.after(state, loop.time(), looked=True)
        quiet = 0.0
        heartbeat = float(settings.STREAM_HEARTBEAT_SECONDS)
        while True:
            timeout = heartbeat - quiet
            unheard = postgres and not routes.hub.listening
            if state.held:
                timeout = min(timeout, recheck.seconds_left(loop.time()))
            if unheard:
                timeout = min(timeout, UNHEARD_RECHECK_SECONDS)
            deadline = stream.next_deadline(state)
            if deadline is not None:
                until_clock = (deadline - clock.now()).total_seconds() + CLOCK_GRACE_SECONDS
                timeout = min(timeout, max(until_clock, 0.0))
            started = loop.time()
            arrived = await listener.next(timeout)
            quiet += loop.time() - started
            changed: set[int] | None = set()
            heard: dict[int, Change] = {}
            rows_too = False
            if deadline is not None and deadline <= clock.now():
                # Also when changes arrived: a busy stream (many games) always has some, and
                # a turn whose time ran out is sent only after its clock is played.
                events = await _db(stream.settle_clocks)(state)
                recheck.after(state, loop.time(), looked=True)
                if events:
                    quiet = 0.0
                    yield b"".join(encode(event) for event in events)
                if not arrived:
                    continue
            if arrived:
                items, everything = listener.take()
                if everything:
                    changed, rows_too = None, True
                else:
                    changed, rows_too, heard = _to_read(state, items)
            elif unheard:
                changed, rows_too = None, True
            # Games with unsettled rows are looked at again on their own schedule, not at every
            # change of another game: that game's turn goes out at once (it never waits for
            # a read on a thread).
            looked = changed is None or rows_too or recheck.due(state, loop.time())
            if looked:
                events = await _db(stream.read)(state, changed)
            elif changed:
                # Turns only: from the row this process kept (its own move) or the one the
                # NOTIFY carried (another's), with no thread; else read on one.
                recalled = stream.recalled_turns(state, changed, heard)
                events = recalled if recalled is not None else (
                    await _db(stream.read_turns)(state, changed)
                )
            else:
                events = []
            recheck.after(state, loop.time(), looked=looked)
            if events:
                quiet = 0.0
                yield b"".join(encode(event) for event in events)
            if quiet >= heartbeat:
                quiet = 0.0
                yield encode(stream.heartbeat(state))
    finally:
        routes.remove(listener)
        release_slot(user_id)


class HeldRecheck:
    """When a stream looks again at its games whose rows are not settled yet (``state.held``):
    ``HELD_FIRST_SECONDS`` after they were found so, then twice as long after each look that
    finds them still so, up to ``HELD_MAX_SECONDS``."""

    def __init__(self) -> None:
        self.delay = HELD_FIRST_SECONDS
        self.at: float | None = None  # loop time of the next look; None: nothing held

    def after(self, state: stream.StreamState, now: float, *, looked: bool) -> None:
        """Called after each step of the stream; ``looked``: the step read the rows."""
        if not state.held:
            self.delay, self.at = HELD_FIRST_SECONDS, None
        elif self.at is None:
            self.at = now + self.delay
        elif looked:
            self.delay = min(self.delay * 2, HELD_MAX_SECONDS)
            self.at = now + self.delay

    def seconds_left(self, now: float) -> float:
        return 0.0 if self.at is None else max(0.0, self.at - now)

    def due(self, state: stream.StreamState, now: float) -> bool:
        return bool(state.held) and self.at is not None and now >= self.at


def _to_read(
    state: stream.StreamState, items: list[tuple[int, int, Change]]
) -> tuple[set[int], bool, dict[int, Change]]:
    """The games to read after these changes, whether their rows too (or turns only), and
    the last change of each game that carried its row (``stream.recalled_turns`` uses it only
    at the version last heard of)."""
    changed, rows_too, heard = set(), False, {}
    for game_id, seat, change in items:
        state.follow(game_id, seat)
        need = stream.needs_read(state, game_id, change.version, change.awaiting, change.status)
        if need != stream.NO_READ:
            changed.add(game_id)
            rows_too = rows_too or need == stream.ROWS_TOO
        if change.row is not None:
            heard[game_id] = change
    return changed, rows_too, heard


# --- the schema ------------------------------------------------------------------------------
STREAM_DESCRIPTION = """\
One long response carrying every event of every game you sit in, so one connection can play
many games at once: `started` (a game was dealt), `turn` (your seat is awaited: the same body
as `GET /api/games/{id}/view/`, so send the move with its `version`), `strike` and `forfeited`
(a turn clock ran out), `ended` (the result), and a `heartbeat` every so often on a quiet
stream.

NDJSON (one JSON object per line) by default; Server-Sent Events with
`Accept: text/event-stream` (the same JSON in `data`, the type in `event`, heartbeats as
comments with an `id:` line).

Every event has an `id`, a heartbeat too: the stream's resume cursor as it stands, not the
event's name (a `turn` or a heartbeat carries the id of the event before it; a fresh stream's
`started` events share one), so never tell events apart by it. Reconnect with the last one you
got (`?since=<id>`, or the `Last-Event-ID` header an EventSource sends by itself) and you get
every `started`, `strike`, `forfeited` and `ended` after it, none twice, and a `turn` for each
game awaiting you. A `turn` is the game as it is: after a reconnect, or when the game moved on
meanwhile, you get the current one (check its `version`). Without `since`, the stream starts
with your running games (`started`) and the turns awaiting you, or with a heartbeat: a resume
point before your first event.

A `turn` is sent once per game version (again only after a reconnect): if your move fails
(a 429 or 503, a 500, a dropped connection), send it again, with the same `Idempotency-Key`;
nothing on the stream asks twice. A `turn` comes only when your seat is awaited: an Uno-catch
window or a jump-in out of turn is never on the stream (follow the game with a long poll for
those).

Streams are capped per user in each server process, and per process (not across the
server): past a cap, a 429 `too_many_streams` with `Retry-After`."""


class StreamApi(APIView):
    """Describes ``stream_view`` in the schema (drf-spectacular reads DRF views only); never
    routed itself."""

    @extend_schema(
        operation_id="stream",
        tags=["play"],
        summary="Your event stream (every game you sit in)",
        description=STREAM_DESCRIPTION,
        parameters=[
            OpenApiParameter(
                "since", str, required=False, pattern=CURSOR_PATTERN,
                description="Resume after this event id (the `id` of the last event you got); "
                "`Last-Event-ID` does the same. Anything else is a 400 `invalid` naming the one "
                "you sent, and so is an id this server never gave (ahead of the stream: from "
                "another server, or before its database was replaced): connect without it.",
                examples=[OpenApiExample("After event 5407-81", value="5407-81")],
            ),
            OpenApiParameter(
                "Last-Event-ID", str, OpenApiParameter.HEADER, required=False,
                pattern=CURSOR_PATTERN,
                description="What an EventSource sends on reconnecting: resume after it.",
            ),
            OpenApiParameter(
                "Accept", str, OpenApiParameter.HEADER, required=False,
                enum=[stream.NDJSON, stream.SSE],
                description="`text/event-stream` for Server-Sent Events; NDJSON otherwise.",
            ),
            RETRY_AFTER,
        ],
        responses={
            (200, stream.NDJSON): OpenApiResponse(
                StreamEventSchema,
                "One JSON event per line, for as long as you keep the connection.",
                examples=STREAM_EXAMPLES,
            ),
            (200, stream.SSE): OpenApiResponse(
                StreamEventSchema,
                "The same events as Server-Sent Events: `id`, `event` (the type) and `data` "
                "(the JSON); a heartbeat is a comment and its `id`.",
            ),
            **error_responses(400, 401, 429, raises=[
                BadCursor({SINCE: [NOT_A_CURSOR]}),
                TooManyStreams(),
            ]),
        },
    )
    def get(self, request: Request) -> HttpResponse:  # pragma: no cover - never routed
        raise NotImplementedError


stream_view.cls = StreamApi  # type: ignore[attr-defined]
stream_view.initkwargs = {}  # type: ignore[attr-defined]
stream_view.csrf_exempt = True  # type: ignore[attr-defined]
stream_start.csrf_exempt = True  # type: ignore[attr-defined]  (as the stream's view: a token)
