"""gunicorn's worker class for ``arena.asgi`` (docker-compose.yml, the image, bench/api.py):
uvicorn's, with the client's address as the connection's. The proxy's X-Forwarded-For is
read by Django (``NUM_PROXIES``), as under gunicorn's own workers; uvicorn would otherwise
rewrite the address itself for a proxy on 127.0.0.1."""

import asyncio
import json
import sys
from typing import Any

from gunicorn.arbiter import Arbiter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

# On a stop (a deploy, a restart), requests still running after this many seconds are cancelled:
# an event stream never ends by itself, and its client reconnects with its last event id
# anyway (without it a worker with an open stream waited gunicorn's graceful timeout, 30 s).
GRACEFUL_SHUTDOWN_SECONDS = 3


# A request's line and headers (and a chunked body's trailers) may take this much; past it the
# request is answered 431 and the connection closed. httptools has no cap of its own: a header
# that never ended grew the worker without bound and blocked its event loop until gunicorn
# killed it, with every wait and stream on it (a security review). nginx in front (compose)
# allows 4 x 8 KB.
HEAD_MAX_BYTES = 64 * 1024
# What a chunked body may spend on framing (the size lines and line ends) per chunk, beyond
# HEAD_MAX_BYTES in all: the bytes of a body that are not its data, trailers included.
CHUNK_FRAMING_BYTES = 32
# After the 431 the connection is read (and the bytes dropped) this long before it is closed:
# closed with bytes unread, the socket would send a reset, and the client lose the answer.
LINGER_SECONDS = 2.0

_HEAD, _BODY, _BETWEEN = "head", "body", "between"


_TOO_LARGE_BODY = json.dumps({"code": "headers_too_large", "detail": (
    f"The request line and headers are over {HEAD_MAX_BYTES} bytes.")},
    separators=(",", ":")).encode()
TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
             b"content-type: application/json\r\n"
             b"content-length: " + str(len(_TOO_LARGE_BODY)).encode() + b"\r\n"
             b"connection: close\r\n\r\n" + _TOO_LARGE_BODY)


class HeadCappedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bytes of each request that are not body data
    counted: its head (a head read whole is measured by what it holds, when it completes; one
    still coming, by the bytes read so far), and a body's framing and trailers (the bytes read
    less the data). Over the cap, the request is refused: answered 431 (after the response in
    progress, if a pipelined request is refused) and the connection closed."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.phase = _BETWEEN
        self.head_bytes = self.overhead = self.chunks = self.body_read = 0
        self.refused = self.answer_owed = False
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return  # dropped until the close
        self.body_read = 0
        super().data_received(data)
        if self.refused or self.transport.is_closing():
            return
        # Counted after the parser read it: a read that begins a head and ends it was
        # measured in ``on_headers_complete``; one that ends it and carries body bytes counts
        # for the body only what is not its data (bounded by the head's own cap).
        if self.phase == _HEAD:  # (less the data of a body the read ended first)
            self.head_bytes += len(data) - self.body_read
            if self.head_bytes > HEAD_MAX_BYTES:
                self._refuse()
        elif self.phase == _BODY:
            self.overhead += len(data) - self.body_read
            if self.overhead > 2 * HEAD_MAX_BYTES + CHUNK_FRAMING_BYTES * self.chunks:
                self._refuse()

    # The parser's callbacks: once the connection is refused, no request begins, reaches the
    # application or goes on (what uvicorn's own ``on_url`` and ``on_header`` still collect
    # is never used, and is at most the rest of one read).
    def on_message_begin(self) -> None:
        if not self.refused:
            self.phase, self.head_bytes, self.overhead, self.chunks = _HEAD, 0, 0, 0
            super().on_message_begin()

    def on_headers_complete(self) -> None:
        if self.refused:
            return
        held = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if held > HEAD_MAX_BYTES:
            self._refuse()  # before the request reaches the application
            return
        self.phase = _BODY
        super().on_headers_complete()

    def on_chunk_header(self) -> None:
        self.chunks += 1

    def on_body(self, body: bytes) -> None:
        if not self.refused:
            self.body_read += len(body)
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self.refused:
            self.phase = _BETWEEN
            super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.answer_owed:
            self._answer_refusal()

    def _refuse(self) -> None:
        self.refused = True
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self._answer_refusal()
        elif self.phase == _BODY:
            # This request's own body (its trailers): the application hears the client gone,
            # and the client gets the 431 unless the application's answer has begun.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.transport.close()
            else:
                self._answer_refusal()
        else:
            # A pipelined request's head: its answer waits for the one in progress, whole.
            self.answer_owed = True
            self.transport.pause_reading()

    def _answer_refusal(self) -> None:
        """Answer 431, end our side, and close once the client has had time to read it."""
        self.answer_owed = False
        if self.transport.is_closing():
            return
        self.transport.write(TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self.transport.close)


class DrainingServer(Server):
    async def shutdown(self, sockets: Any = None) -> None:
        # First, every wait answers with its game as it is: a move played with ``wait`` is
        # committed, and cancelling its request at the end of the grace answered it 500.
        from games import listen  # here: the worker class is loaded before Django is set up

        listen.drain()
        await super().shutdown(sockets)


class Worker(UvicornWorker):
    # Applied over what UvicornWorker takes from gunicorn's own settings, so none of these may
    # name ``timeout_keep_alive``: uvicorn's idle timeout must stay gunicorn's --keep-alive,
    # which docker-compose.yml and the Dockerfile set above nginx's upstream keepalive_timeout
    # (tests/arena/test_deployment.py checks both).
    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto", "http": HeadCappedProtocol, "proxy_headers": False,
        "server_header": False,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_SECONDS,
    }

    async def _serve(self) -> None:
        # UvicornWorker._serve with the server above.
        self.config.app = self.wsgi
        server = DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
