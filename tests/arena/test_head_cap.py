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


def test_a_head_read_whole_over_the_cap_never_reaches_the_application(alice: Any) -> None:
    """Sent in one go, a head completes inside one read: it is measured by what it holds."""
    big = b"a" * (HEAD_MAX_BYTES + 1000)
    with asgi_server(workers=1) as port:
        answer = answer_to(port, b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + big
                           + b"\r\n\r\n", b"", chunks=0)
        assert answer.startswith(b"HTTP/1.1 431 ")
        assert call(port, "GET", "/healthz/")[0] == 200


def test_trailers_that_never_end_are_a_431_too(alice: Any) -> None:
    """A chunked body's trailers go through the same header parser, after the head."""
    with asgi_server(workers=1) as port:
        answer = answer_to(
            port, b"POST /api/auth/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\nX-Trailer: ", b"a" * 16384, chunks=HEAD_MAX_BYTES // 16384 * 6)
        assert b"HTTP/1.1 431 " in answer
        assert call(port, "GET", "/healthz/")[0] == 200


def test_a_pipelined_request_over_the_cap_is_refused_after_the_answer_before_it(
    alice: Any
) -> None:
    """The 431 follows the earlier request's whole answer, never inside it."""
    with asgi_server(workers=1) as port:
        answer = answer_to(
            port, b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", b"a" * 16384,
            chunks=HEAD_MAX_BYTES // 16384 * 4)
        first, _, rest = answer.partition(b"HTTP/1.1 431 ")
        assert first.startswith(b"HTTP/1.1 200 ") and rest
        length = int(first.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        assert len(first.split(b"\r\n\r\n", 1)[1]) == length  # the 200's body, whole


def test_a_chunked_upload_in_many_small_chunks_goes_through(alice: Any) -> None:
    """Framing is not head: 20,000 one-byte chunks (100 KB of size lines and line ends)."""
    body = b'{"pad": "' + b"a" * 19990 + b'"}'
    chunked = b"".join(b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body)))
    with asgi_server(workers=1) as port:
        answer = answer_to(
            port, b"POST /api/auth/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked + b"0\r\n\r\n", b"", chunks=0)
        assert not answer.startswith(b"HTTP/1.1 431"), answer[:200]


def test_a_pipelined_head_over_the_cap_behind_an_open_stream_leaves_the_stream_whole(
    django_user_model: Any,
) -> None:
    """Its 431 waits for the stream's end: nothing is written into the stream's body (a
    review found the 431 spliced into the chunked NDJSON, and the stream's next write
    failing)."""
    import time

    from arena.accounts.services import token_create

    key = token_create(user=django_user_model.objects.create_user("piper"))[1]
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}, workers=1) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(f"GET /api/stream/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Authorization: Token {key}\r\n\r\n".encode())
            received = sock.recv(65536)
            assert received.startswith(b"HTTP/1.1 200 ")
            sock.sendall(b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            for _ in range(HEAD_MAX_BYTES // 16384 * 2):
                sock.sendall(b"a" * 16384)
            deadline = time.monotonic() + 3.5
            while time.monotonic() < deadline:
                received += sock.recv(65536)
        assert b"431" not in received
        assert received.count(b'"type":"heartbeat"') >= 2  # the stream went on
        assert call(port, "GET", "/healthz/")[0] == 200
