"""Game changes for asynchronous code: the waits and streams that cost a socket, not a thread.

Each event loop of the process has one ``Hub`` (``await hub()``). It hears of changes two ways:

* on PostgreSQL, ONE psycopg ``AsyncConnection`` LISTENing on ``notify.CHANNEL`` (the trigger
  on ``games_game.version`` NOTIFYs every commit of a change, from any process or machine). It
  reconnects with back-off; whenever it (re)connects, every subscription is told to re-read
  what it follows (notifications sent while it was away are lost);
* the in-process announcements (``notify.announce``, on commit), bridged into each hub's loop
  with ``call_soon_threadsafe``: the only channel on SQLite (the embedded default is one
  process), and the quickest on PostgreSQL (the NOTIFY then repeats it, and is dropped).

A ``Subscription`` queues what it is subscribed to, so nothing is lost between two ``next``
calls; it drops repeats (the same version twice), and on overflow it keeps one "read the
game" per game instead of every change.

Under an ASGI server there is one loop per process, so one LISTEN connection per process. A
loop that ends (an async view run by a WSGI server gets a loop per request) takes its hub with
it: the hub's listener task is cancelled and its connection closed with the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connections

from games import notify
from games.notify import Change

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

# A subscription holds at most this many changes; past it, one "read the game" per game.
QUEUE_SIZE = 1000
# ``(RESYNC, Change())`` from ``next``: notifications may have been lost (the LISTEN
# connection was (re)established): re-read everything you follow.
RESYNC = 0
# How long ``hub()`` waits for the first LISTEN before it lets its caller go on (the caller
# is told to re-read when the connection comes up, so this only saves a re-read).
FIRST_LISTEN_SECONDS = 2.0
RECONNECT_FIRST_SECONDS = 0.1
RECONNECT_MAX_SECONDS = 5.0
# Tracking of versions already delivered (for repeats) is forgotten past this many games.
SEEN_MAX = 10_000

# Takes a change as it is heard (True), or leaves it to be queued (False).
AtOnce = Callable[[int, Change], bool]

# A hub refers to its loop, so this cannot be a weak mapping: closed loops are dropped instead.
_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}
_hubs_lock = threading.Lock()


async def hub() -> Hub:
    """This event loop's hub, started on first use; on PostgreSQL, the first call waits for
    the LISTEN to be up (at most ``FIRST_LISTEN_SECONDS``)."""
    loop = asyncio.get_running_loop()
    with _hubs_lock:
        for closed in [each for each in _hubs if each.is_closed()]:
            del _hubs[closed]
        found = _hubs.get(loop)
        if found is None:
            found = _hubs[loop] = Hub(loop)
    await found.start()
    return found


def drain() -> None:
    """``Hub.drain`` for the running loop's hub, if it has one (call it on that loop)."""
    found = _hubs.get(asyncio.get_running_loop())
    if found is not None:
        found.drain()


def _bridge(game_id: int, change: Change) -> None:
    """``notify``'s in-process announcement (any thread): into every hub's loop."""
    with _hubs_lock:
        hubs = list(_hubs.values())
    for each in hubs:
        # A closed loop refuses (RuntimeError): its hub goes with it.
        with contextlib.suppress(RuntimeError):
            each.loop.call_soon_threadsafe(each.dispatch, game_id, change)


notify.add_bridge(_bridge)


class Doorbell:
    """What a coroutine waits on, with a timeout, for its inbox to get something: rung from
    this loop's callbacks. One future a wait and one timer, where ``asyncio.wait_for`` on an
    ``Event`` makes a task a wait on Python 3.11: one more turn of the loop before the waiter
    runs, which a busy loop made milliseconds (the streams' wake-ups: docs/scaling.md). Check
    the inbox before ``wait``: a ring with nobody waiting is not kept."""

    def __init__(self) -> None:
        self._waiter: asyncio.Future[bool] | None = None

    def ring(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(True)

    async def wait(self, timeout: float) -> bool:
        """True when rung, False after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(max(0.0, timeout), _unrung, waiter)
        try:
            return await waiter
        finally:
            timer.cancel()
            self._waiter = None


def _unrung(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


class Hub:
    """Fans this loop's game changes out to its subscriptions. Loop-bound: use it only from
    coroutines running on ``loop``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._by_game: dict[int, set[Subscription]] = {}
        self._everything: set[Subscription] = set()
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        # Times the LISTEN connection was established, and its server process (tests read them).
        self.connects = 0
        self.backend_pid: int | None = None
        # The server is stopping: waits answer now (``drain``).
        self.draining = False

    @property
    def listening(self) -> bool:
        """True while the PostgreSQL LISTEN is up: changes from every process arrive, so a
        waiter needs no periodic re-read. Always False on SQLite (one process only)."""
        return self._listening.is_set()

    async def start(self) -> None:
        if not on_postgresql():
            return
        if self._listener is not None and not self._listener.done():
            return  # listening, or reconnecting: the waits re-read meanwhile (``listening``)
        params = _connection_params()
        self._listener = self.loop.create_task(self._listen(params), name="uno-listen")
        # Only the caller that started it waits for the first LISTEN (a saved re-read).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), FIRST_LISTEN_SECONDS)

    async def stop(self) -> None:
        """Close the LISTEN connection (tests; a new ``start`` opens it again)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        self._listening.clear()

    def subscribe(
        self, game_ids: Iterable[int] | None = None, *, at_once: AtOnce | None = None
    ) -> Subscription:
        """Changes of ``game_ids`` (more with ``watch``), or of every game (None). ``at_once``
        (see ``Subscription``) may take a change as it is heard instead of queueing it."""
        subscription = Subscription(self, everything=game_ids is None, at_once=at_once)
        if game_ids is None:
            self._everything.add(subscription)
        for game_id in game_ids or ():
            subscription.watch(game_id)
        return subscription

    def subscriptions(self) -> int:
        return len(self._everything) + len(
            {each for subs in self._by_game.values() for each in subs}
        )

    def dispatch(self, game_id: int, change: Change) -> None:
        for subscription in self._by_game.get(game_id, ()):
            subscription._push(game_id, change)
        for subscription in self._everything:
            subscription._push(game_id, change)

    def drain(self) -> None:
        """The server is stopping: every wait on this loop answers now, with the game as it
        is, instead of being cancelled when the stop's grace runs out (a move played with
        ``wait`` was answered 500 though it was committed). Wakes them all; they see
        ``draining`` and end their wait."""
        self.draining = True
        self._resync()

    def _resync(self) -> None:
        """Everyone re-reads: notifications may have been lost before this (re)connect."""
        for subscription in self._everything:
            subscription._push(RESYNC, Change())
        for game_id, subscriptions in self._by_game.items():
            for subscription in subscriptions:
                subscription._push(game_id, Change())

    def _add(self, game_id: int, subscription: Subscription) -> None:
        self._by_game.setdefault(game_id, set()).add(subscription)

    def _remove(self, subscription: Subscription) -> None:
        self._everything.discard(subscription)
        for game_id in subscription.games:
            subscriptions = self._by_game.get(game_id)
            if subscriptions is not None:
                subscriptions.discard(subscription)
                if not subscriptions:
                    del self._by_game[game_id]

    async def _listen(self, params: dict[str, object]) -> None:
        import psycopg

        delay = RECONNECT_FIRST_SECONDS
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    **params, autocommit=True  # type: ignore[arg-type]
                ) as conn:
                    await conn.execute(f"LISTEN {notify.CHANNEL}")
                    self.connects += 1
                    self.backend_pid = conn.info.backend_pid
                    self._listening.set()
                    self._resync()
                    delay = RECONNECT_FIRST_SECONDS
                    await self._hear(conn)
            except asyncio.CancelledError:
                self._listening.clear()
                raise
            except Exception:
                log.warning("game notification connection lost; reconnecting", exc_info=True)
            self._listening.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_SECONDS)

    async def _hear(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Dispatch the LISTEN connection's notifications from its socket's reader callback,
        until the connection fails (raised). psycopg's ``notifies()`` would resume this task
        for each, one more turn of the loop before the streams hear of it (under load, turns
        of milliseconds: docs/scaling.md). Nothing else uses the connection meanwhile."""
        pgconn, encoding = conn.pgconn, conn.info.encoding
        failed: asyncio.Future[None] = self.loop.create_future()

        def readable() -> None:
            try:
                pgconn.consume_input()  # raises once the connection is lost
                while (note := pgconn.notifies()) is not None:
                    parsed = Change.from_payload(note.extra.decode(encoding))
                    if parsed is not None:
                        self.dispatch(*parsed)
            except Exception as exc:
                if not failed.done():
                    failed.set_exception(exc)

        socket = pgconn.socket
        self.loop.add_reader(socket, readable)
        try:
            readable()  # what arrived with the LISTEN's answer
            await failed
        finally:
            self.loop.remove_reader(socket)


@functools.cache
def on_postgresql() -> bool:
    # From the settings: ``connections[...]`` would make a connection object for the loop.
    return "postgresql" in settings.DATABASES["default"]["ENGINE"]


def _connection_params() -> dict[str, object]:
    """The default database's connection parameters for a plain psycopg connection (without
    Django's synchronous cursor class and adapters)."""
    params = dict(connections["default"].get_connection_params())
    for django_only in ("cursor_factory", "context"):
        params.pop(django_only, None)
    return params


class Subscription:
    """Changes to the games it watches (or to every game), queued in order. Use it as an
    async context manager (``async with hub.subscribe(...) as changes``): leaving the block
    unsubscribes.

    ``at_once(game_id, change)``, if given, is offered each new change as it is heard (on the
    loop, when nothing is queued before it): True means it was dealt with there and then, and
    it is not queued. It saves the change a trip through the loop's queue of tasks (the
    stream's wake-ups: docs/scaling.md)."""

    def __init__(self, hub: Hub, *, everything: bool, at_once: AtOnce | None = None) -> None:
        self.hub = hub
        self.everything = everything
        self.at_once = at_once
        self.games: set[int] = set()
        self._queue: deque[tuple[int, Change]] = deque()
        self._stale: dict[int, None] = {}  # games to re-read after an overflow, in order
        self._seen: dict[int, int] = {}  # the highest version queued per game
        self._arrived = Doorbell()
        self.closed = False

    def watch(self, game_id: int) -> None:
        """Also follow ``game_id`` from now on."""
        if self.closed or game_id in self.games:
            return
        self.games.add(game_id)
        if not self.everything:
            self.hub._add(game_id, self)

    async def next(self, timeout: float) -> tuple[int, Change] | None:
        """The next ``(game id, change)`` since subscribing (or since the last call), or None
        after ``timeout`` seconds with nothing. ``Change()`` (no version) means "read the
        game"; ``(RESYNC, Change())`` means "re-read every game you follow"."""
        if not self._queue and not self._stale and not await self._arrived.wait(timeout):
            return None
        return self.take()

    def take(self) -> tuple[int, Change] | None:
        """The next queued change without waiting, or None."""
        if self._queue:
            return self._queue.popleft()
        if self._stale:
            game_id = next(iter(self._stale))
            del self._stale[game_id]
            return game_id, Change()
        return None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.hub._remove(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _push(self, game_id: int, change: Change) -> None:
        if self.closed:
            return
        if change.version is not None:
            if self._seen.get(game_id, -1) >= change.version:
                return  # heard already (announced in process, then NOTIFYed)
            if len(self._seen) >= SEEN_MAX:
                self._seen.clear()
            self._seen[game_id] = change.version
        if game_id in self._stale:
            pass  # already to be re-read: that covers this change
        elif self.at_once is not None and not self._queue and not self._stale and (
            self.at_once(game_id, change)
        ):
            return
        elif len(self._queue) >= QUEUE_SIZE:
            self._stale[game_id] = None
        else:
            self._queue.append((game_id, change))
        self._arrived.ring()
