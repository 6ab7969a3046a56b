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


# A request's line and headers together may take this much; past it the connection is
# answered 431 and closed. httptools has no cap of its own: a header that never ended grew the
# worker by 100 MB in 10 s and blocked its event loop until gunicorn killed it, with every wait
# and stream on it (a security review). nginx in front (compose) allows 4 x 8 KB.
HEAD_MAX_BYTES = 64 * 1024
# After the 431 the connection is read (and the bytes dropped) this long before it is closed:
# closed with bytes unread, the socket would send a reset, and the client lose the answer.
LINGER_SECONDS = 2.0


def _too_large() -> bytes:
    body = json.dumps({"code": "headers_too_large", "detail": (
        f"The request line and headers are over {HEAD_MAX_BYTES} bytes.")},
        separators=(",", ":")).encode()
    return (b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"connection: close\r\n\r\n" + body)


class HeadCappedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, counting the bytes of each request's head (from its
    first byte to the end of its headers) and refusing one over ``HEAD_MAX_BYTES``."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.head_bytes: int | None = 0  # None: the head is complete, the body's bytes follow
        self.refused = False
        super().connection_made(transport)

    def on_message_begin(self) -> None:
        self.head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self.head_bytes = None
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return  # dropped until the close
        # Counted after the parser has read it: a chunk that ends the head and carries the
        # body's first bytes counts for nothing (the body is Django's to bound), one that
        # holds the head's bytes only in part counts whole (a bound, and heads are small).
        super().data_received(data)
        if self.head_bytes is None or self.transport.is_closing():
            return
        self.head_bytes += len(data)
        if self.head_bytes > HEAD_MAX_BYTES:
            self._refuse()

    def _refuse(self) -> None:
        """Answer 431, end our side, and close once the client has had time to read it."""
        self.refused = True
        self.transport.write(_too_large())
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
