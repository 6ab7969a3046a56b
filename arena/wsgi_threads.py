"""The WSGI application on a pool of threads, under the ASGI server (``arena.serving``).

One hop from the event loop to a thread and one back per request. a2wsgi, used before, made
four round trips from the thread to the loop and back per request (read the body, send the
status, the body, its end), each blocking the thread until the loop got to it: under load the
loop spent a third of its time waking those threads, and every hop queued behind everything
else the loop and the GIL had to do. Measured with bench/waiting.py (docs/scaling.md).

So:

* the request's body is read on the loop before the request goes to a thread, when the
  client sent it at once (a small body, the API's); a body still coming is read by the thread
  as it arrives, a hop per piece, as before;
* the thread runs the application and hands back the whole response (status, headers, body)
  in one piece: the loop sends it. A response larger than ``BUFFERED_BYTES`` (or one that
  streams) is sent piece by piece from the thread instead, each piece waiting for the loop to
  take it (the client's pace holds the thread, not the memory).

The application's ``close`` (Django's ``request_finished``: the thread's database connection
is kept or closed) runs on the thread that ran it.
"""

from __future__ import annotations

import asyncio
import io
import sys
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from core.threadpool import ThreadPool

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Headers = list[tuple[bytes, bytes]]

# A response up to this size is handed to the loop whole; past it, piece by piece.
BUFFERED_BYTES = 256 * 1024


class ClientGone(Exception):
    """The client went away before its request's body was read."""


class ThreadedWsgi:
    """An ASGI application running ``app`` (WSGI) on ``threads`` threads."""

    def __init__(self, app: WsgiApp, threads: int) -> None:
        self.app = app
        self.threads = ThreadPool(threads, "WSGI")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        try:
            body = await _first_body(loop, receive)
        except ClientGone:
            return
        environ = environ_of(scope, body)
        answer = await self.threads.run(self._respond, environ, _Sender(loop, send))
        if answer is not None:  # the whole response: sent here
            status, headers, data = answer
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": data})

    def _respond(
        self, environ: dict[str, Any], sender: _Sender
    ) -> tuple[int, Headers, bytes] | None:
        """On a thread: the application's response whole, or None if ``sender`` sent it."""
        response = _Response(sender)
        iterable = self.app(environ, response.start_response)
        try:
            for chunk in iterable:
                if not chunk:
                    continue
                if sender.started:
                    sender.body(chunk)
                    continue
                response.chunks.append(chunk)
                response.size += len(chunk)
                if response.size > BUFFERED_BYTES:
                    sender.start(response.status, response.headers, b"".join(response.chunks))
            if sender.started:
                sender.end()
                return None
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
        return response.status, response.headers, b"".join(response.chunks)


class _Response:
    """What the application said so far (on its thread)."""

    def __init__(self, sender: _Sender) -> None:
        self.sender = sender
        self.status = 500
        self.headers: Headers = []
        self.chunks: list[bytes] = []
        self.size = 0

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        if exc_info is not None and self.sender.started:
            raise exc_info[1].with_traceback(exc_info[2])  # already on the wire: WSGI's rule
        self.status = int(status.split(" ", 1)[0])
        self.headers = [
            (name.strip().lower().encode("latin-1"), value.strip().encode("latin-1"))
            for name, value in headers
        ]
        return self.write

    def write(self, chunk: bytes) -> None:  # WSGI's legacy ``write``: kept with the rest
        self.chunks.append(chunk)
        self.size += len(chunk)


class _Sender:
    """A large response, sent from its thread: each piece waits for the loop to send it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, send: Send) -> None:
        self.loop, self.send, self.started = loop, send, False

    def _send(self, message: Message) -> None:
        asyncio.run_coroutine_threadsafe(self.send(message), self.loop).result()

    def start(self, status: int, headers: Headers, first: bytes) -> None:
        self.started = True
        self._send({"type": "http.response.start", "status": status, "headers": headers})
        self._send({"type": "http.response.body", "body": first, "more_body": True})

    def body(self, chunk: bytes) -> None:
        self._send({"type": "http.response.body", "body": chunk, "more_body": True})

    def end(self) -> None:
        self._send({"type": "http.response.body", "body": b""})


async def _first_body(loop: asyncio.AbstractEventLoop, receive: Receive) -> Any:
    """The body as a file: whole if the first message carried all of it, else a reader that
    fetches the rest from the thread."""
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientGone()
    first = message.get("body", b"")
    if not message.get("more_body", False):
        return io.BytesIO(first)
    return _BodyReader(loop, receive, first)


class _BodyReader(io.RawIOBase):
    """A body still arriving, read from a thread: each piece fetched from the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, receive: Receive, first: bytes) -> None:
        super().__init__()
        self.loop, self.receive = loop, receive
        self.buffer = bytearray(first)
        self.more = True

    def _fetch(self) -> None:
        message = asyncio.run_coroutine_threadsafe(self.receive(), self.loop).result()
        if message["type"] == "http.disconnect":
            self.more = False  # what came is all there is: the application sees a short body
            return
        self.buffer += message.get("body", b"")
        self.more = message.get("more_body", False)

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        while self.more and (size < 0 or len(self.buffer) < size):
            self._fetch()
        return self._take(len(self.buffer) if size < 0 else min(size, len(self.buffer)))

    def readline(self, size: int | None = -1) -> bytes:
        size = -1 if size is None else size
        while True:
            end = self.buffer.find(b"\n", 0, size if size >= 0 else None)
            if end >= 0:
                return self._take(end + 1)
            if size >= 0 and len(self.buffer) >= size:
                return self._take(size)
            if not self.more:
                return self._take(len(self.buffer))
            self._fetch()

    def _take(self, n: int) -> bytes:
        taken = bytes(self.buffer[:n])
        del self.buffer[:n]
        return taken


def environ_of(scope: Scope, body: Any) -> dict[str, Any]:
    """The WSGI environ of an ASGI HTTP request (PEP 3333; what a2wsgi built)."""
    root = scope.get("root_path", "").encode("utf8").decode("latin-1")
    path = scope["path"].encode("utf8").decode("latin-1")
    if root and path.startswith(root):
        path = path[len(root):]
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root,
        "PATH_INFO": path,
        "QUERY_STRING": scope["query_string"].decode("ascii"),
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1] or 0),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    client = scope.get("client")
    if client is not None:
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = client[0], str(client[1])
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        if name not in ("CONTENT_LENGTH", "CONTENT_TYPE"):
            name = "HTTP_" + name
        value = raw_value.decode("latin-1")
        if name in environ:
            value = f"{environ[name]},{value}"
        environ[name] = value
    return environ
