"""arena.wsgi_threads: the WSGI application on threads under the ASGI server. Driven here as the
server drives it (receive/send on an event loop), with small WSGI applications of our own;
through a real server it is covered by every test that serves with ``serving="asgi"``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

from arena.wsgi_threads import BUFFERED_BYTES, ThreadedWsgi

SCOPE = {
    "type": "http", "method": "POST", "path": "/echo/", "query_string": b"a=1",
    "http_version": "1.1", "headers": [(b"content-type", b"text/plain"), (b"x-a", b"1"),
                                       (b"x-a", b"2")],
    "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000), "root_path": "",
}


def _serve(app: Any, pieces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the server would be sent for a request whose body comes in ``pieces``."""
    sent: list[dict[str, Any]] = []

    async def run() -> None:
        incoming = list(pieces)

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(0)
            return incoming.pop(0) if incoming else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await ThreadedWsgi(app, threads=2)(dict(SCOPE), receive, send)

    asyncio.run(run())
    return sent


def _echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    body = environ["wsgi.input"].read()
    start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", environ["HTTP_X_A"])])
    return [environ["REQUEST_METHOD"].encode(), b" ", environ["QUERY_STRING"].encode(), b" ", body]


def test_a_small_response_is_sent_whole_after_the_application_ran() -> None:
    sent = _serve(_echo, [{"type": "http.request", "body": b"hello", "more_body": False}])
    assert sent == [
        {"type": "http.response.start", "status": 201,
         "headers": [(b"content-type", b"text/plain"), (b"x-seen", b"1,2")]},
        {"type": "http.response.body", "body": b"POST a=1 hello"},
    ]


def test_a_body_that_arrives_in_pieces_is_read_whole_by_the_application() -> None:
    pieces = [{"type": "http.request", "body": part, "more_body": True} for part in
              (b"one\n", b"two", b"\nthree")]
    pieces.append({"type": "http.request", "body": b"", "more_body": False})
    sent = _serve(_echo, pieces)
    assert sent[-1]["body"] == b"POST a=1 one\ntwo\nthree"


def test_lines_of_a_body_in_pieces_are_read_as_lines() -> None:
    def lines(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        stream = environ["wsgi.input"]
        first, rest = stream.readline(), stream.read()
        start_response("200 OK", [])
        return [first, b"|", rest]

    pieces = [{"type": "http.request", "body": b"ab", "more_body": True},
              {"type": "http.request", "body": b"c\nde", "more_body": False}]
    assert _serve(lines, pieces)[-1]["body"] == b"abc\n|de"


def test_a_large_response_streams_from_its_thread_and_closes_there() -> None:
    piece = b"x" * 65536
    threads: dict[str, int] = {}

    class Body:
        def __iter__(self) -> Iterator[bytes]:
            threads["ran"] = threading.get_ident()
            for _ in range(BUFFERED_BYTES // len(piece) + 3):
                yield piece

        def close(self) -> None:  # Django's request_finished: the thread's connections
            threads["closed"] = threading.get_ident()

    def large(environ: dict[str, Any], start_response: Any) -> Body:
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return Body()

    sent = _serve(large, [{"type": "http.request", "body": b"", "more_body": False}])
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    bodies = sent[1:]
    assert all(m["more_body"] for m in bodies[:-1]) and not bodies[-1].get("more_body")
    assert b"".join(m["body"] for m in bodies) == piece * (BUFFERED_BYTES // len(piece) + 3)
    assert threads["ran"] == threads["closed"] != threading.get_ident()


def test_a_client_gone_before_its_body_never_reaches_the_application() -> None:
    called = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        called.append(True)
        start_response("200 OK", [])
        return [b""]

    assert _serve(app, [{"type": "http.disconnect"}]) == []
    assert called == []
