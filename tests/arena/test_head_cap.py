"""The web worker caps a request's head (arena/workers.py): a header that never ends is a 431
and a closed connection, not a worker growing until it is killed with every wait on it."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from arena.workers import HEAD_MAX_BYTES
from tests.games.stream_helpers import asgi_server
from tests.live_server import call

pytestmark = pytest.mark.django_db(transaction=True)


def answer_to(port: int, head_start: bytes, filler: bytes, chunks: int) -> bytes:
    """Send ``head_start`` then ``chunks`` times ``filler`` (a header never ended), and read
    what the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head_start)
        try:
            for _ in range(chunks):
                sock.sendall(filler)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed on us: what it said is in the socket's buffer
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_a_header_that_never_ends_is_a_431_and_the_worker_serves_on(alice: Any) -> None:
    with asgi_server(workers=1) as port:
        answer = answer_to(port, b"GET /api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ",
                           b"a" * 16384, chunks=HEAD_MAX_BYTES // 16384 * 4)
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line == b"HTTP/1.1 431 Request Header Fields Too Large"
        body = json.loads(rest.split(b"\r\n\r\n", 1)[1])
        assert body["code"] == "headers_too_large"
        assert call(port, "GET", "/healthz/")[0] == 200  # the same worker, still serving


def test_heads_under_the_cap_and_large_bodies_go_through(alice: Any) -> None:
    with asgi_server(workers=1) as port:
        status, _, _ = call(port, "GET", "/healthz/", headers={"X-Big": "a" * 30000})
        assert status == 200
        # A large body is Django's to bound (DATA_UPLOAD_MAX_MEMORY_SIZE), not the head's cap.
        status, body, _ = call(port, "POST", "/api/auth/login/", body={"pad": "a" * 500_000})
        assert status != 431, body
