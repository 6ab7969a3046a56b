"""One HTTP/1.1 exchange at a time on a kept-alive connection: all the bot transport needs.

``Http1Connection`` is an asyncio protocol: ``exchange(head, body)`` writes a request and
returns the ``Response`` (status, ``Location``, body), parsed by httptools (llhttp, the parser
uvicorn serves with). It opens no connection itself: ``bots/transport.py`` dials, and only the
addresses the guard checked.

Why not aiohttp's client, which the transport used first: measured on this machine (issue 10),
aiohttp spent about 280 us of CPU per signed round trip to a local bot and this about 140 us,
and a tournament worker is one process whose turns are bound by that CPU. What it leaves out
on purpose: redirects (never followed), compression (never asked for), cookies, proxies,
``Expect: 100-continue``, pipelining. A response body is capped: past ``max_body`` bytes (or
when more is announced) the exchange fails with ``ResponseTooLarge`` and the connection is
dropped, never drained. So does a response whose head (status line and headers) passes
``MAX_HEAD`` bytes, or whose bytes in all (head, body, chunk framing, trailers) pass
``MAX_HEAD`` + ``FRAMING`` x ``max_body``: httptools keeps a header value that never ends
without a limit, and a bot that sent one grew the worker by megabytes a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

import httptools

MAX_HEAD = 32 * 1024  # bytes of a response's status line and headers
FRAMING = 8  # a body in 1-byte chunks takes 6 bytes a byte on the wire ("1\r\nx\r\n")


@dataclass(frozen=True)
class Response:
    status: int
    location: str  # the Location header ('' without one): only a redirect's detail uses it
    body: bytes


class ResponseTooLarge(Exception):
    def __init__(self, status: int, location: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.location = status, location


class ConnectionLost(Exception):
    """The connection ended before the whole response. ``received``: any byte of it came."""

    def __init__(self, reason: str, *, received: bool) -> None:
        super().__init__(reason)
        self.received = received


class BadResponse(Exception):
    """What came back is not HTTP/1.x."""


class Http1Connection(asyncio.Protocol):
    def __init__(self, *, max_body: int) -> None:
        self.max_body = max_body
        self.closed = False
        self.reusable = False  # the last response completed and the server keeps the connection
        self.idle_since = 0.0  # loop time it was last put back in a pool
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._bytes = 0
        self._waiter: asyncio.Future[Response] | None = None
        self._received = False
        self._reset_message()

    def _reset_message(self) -> None:
        self._status = 0
        self._location = ""
        self._length: int | None = None
        self._chunked = False
        self._headers_done = False
        self._size = 0
        self._body: list[bytes] = []
        self._too_large = ""  # why the body is over the cap, once it is

    # --- the caller's side ------------------------------------------------------------------
    async def exchange(self, head: bytes, body: bytes) -> Response:
        """Send one request and wait for its whole response (the caller's deadline rules: a
        cancelled exchange leaves the connection closed, never half-read in a pool)."""
        if self.closed or self._transport is None or self._waiter is not None:
            raise ConnectionLost("the connection is not ready", received=False)
        self.reusable = False
        self._received = False  # any byte of this exchange's answer (an interim 100 included)
        self._bytes = 0  # of this exchange's answer, on the wire
        self._reset_message()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            self._transport.writelines((head, body))
            return await self._waiter
        except BaseException:
            if not self.reusable:
                self.close()
            raise
        finally:
            self._waiter = None

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.abort()  # unsent bytes or an unread response are of no use

    # --- asyncio.Protocol -------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # bytes nobody asked for: the connection cannot be trusted again
            return
        self._received = True
        self._bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(BadResponse(f"the answer is not HTTP: {exc}"))
            return
        if not self._headers_done and self._bytes > MAX_HEAD:
            self._too_large = f"the bot's headers passed the {MAX_HEAD}-byte cap"
        elif self._bytes > MAX_HEAD + FRAMING * self.max_body:
            self._too_large = (f"the bot sent more than {MAX_HEAD + FRAMING * self.max_body} "
                               "bytes in all")
        if self._too_large:
            self._fail(ResponseTooLarge(self._status, self._location, self._too_large))

    def eof_received(self) -> bool:
        return False  # close our side too: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is None or self._waiter.done():
            return
        if exc is None and self._headers_done and self._length is None and not self._chunked:
            self._complete()  # a body delimited by the end of the connection (HTTP/1.0 style)
            return  # (a reset instead of a close cut it short: that is a failure below)
        reason = f"{type(exc).__name__}: {exc}" if exc else "the bot closed the connection"
        self._waiter.set_exception(ConnectionLost(reason, received=self._received))

    # --- httptools callbacks ----------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.lower()
        if key == b"content-length":
            try:
                self._length = int(value)
            except ValueError:
                self._length = None
        elif key == b"location":
            self._location = value.decode("latin-1")[:500]
        elif key == b"transfer-encoding" and b"chunked" in value.lower():
            self._chunked = True

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()
        self._headers_done = True
        if self._length is not None and self._length > self.max_body:
            self._too_large = (f"the bot announced {self._length} bytes, over the "
                               f"{self.max_body}-byte cap")

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size <= self.max_body:
            self._body.append(body)
        elif not self._too_large:
            self._too_large = f"the bot sent more than the {self.max_body}-byte cap"

    def on_message_complete(self) -> None:
        if self._status < 200:  # an interim answer (100 Continue): the real one follows
            self._reset_message()
            return
        self.reusable = self._parser.should_keep_alive()
        self._complete()

    # --- ending an exchange -----------------------------------------------------------------
    def _complete(self) -> None:
        if self._too_large:
            self._fail(ResponseTooLarge(self._status, self._location, self._too_large))
        elif self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(
                Response(self._status, self._location, b"".join(self._body)))

    def _fail(self, error: Exception) -> None:
        self.reusable = False
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)
        self.close()


Dial = Callable[[], Awaitable[Http1Connection]]


class Pool:
    """Kept-alive connections of one event loop, by destination (scheme, host, port).

    At most ``per_host`` exchanges at once to one destination and ``limit`` in all; a caller
    waits for a free slot within its own deadline. A connection idle for ``keepalive``
    seconds is closed rather than reused. A reused connection that the bot had closed while it
    was idle (its server's keep-alive ran out first) fails before any byte of an answer: the
    request is then sent once more on a new connection, as browsers and urllib3 do.
    """

    def __init__(self, *, limit: int, per_host: int, keepalive: float) -> None:
        self.per_host = per_host
        self.keepalive = keepalive
        self._all = asyncio.Semaphore(limit)
        self._slots: dict[Hashable, asyncio.Semaphore] = {}
        self._idle: dict[Hashable, list[Http1Connection]] = {}
        self._swept = 0.0

    async def exchange(self, key: Hashable, dial: Dial, head: bytes, body: bytes) -> Response:
        slots = self._slots.get(key)
        if slots is None:
            slots = self._slots[key] = asyncio.Semaphore(self.per_host)
        async with slots, self._all:
            connection = self._take(key)
            if connection is not None:
                try:
                    return self._after(key, connection, await connection.exchange(head, body))
                except ConnectionLost as exc:
                    if exc.received:
                        raise
            connection = await dial()
            return self._after(key, connection, await connection.exchange(head, body))

    def _take(self, key: Hashable) -> Http1Connection | None:
        idle = self._idle.get(key)
        now = asyncio.get_running_loop().time()
        while idle:
            connection = idle.pop()  # the most recently used: the least likely to be stale
            if not connection.closed and now - connection.idle_since < self.keepalive:
                return connection
            connection.close()
        return None

    def _after(self, key: Hashable, connection: Http1Connection, response: Response
               ) -> Response:
        if connection.reusable and not connection.closed:
            now = asyncio.get_running_loop().time()
            connection.idle_since = now
            self._idle.setdefault(key, []).append(connection)
            if now - self._swept > self.keepalive:
                self._sweep(now)
        else:
            connection.close()
        return response

    def _sweep(self, now: float) -> None:
        """Close what has been idle too long everywhere (destinations no longer called)."""
        self._swept = now
        for key, idle in list(self._idle.items()):
            keep = [c for c in idle if not c.closed and now - c.idle_since < self.keepalive]
            for connection in idle:
                if connection not in keep:
                    connection.close()
            if keep:
                self._idle[key] = keep
            else:
                del self._idle[key]

    def close(self) -> None:
        """Close every idle connection (one in use is closed by its exchange's end)."""
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
