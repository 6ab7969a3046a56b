"""Bad input through a real server: gunicorn with DEBUG off, as deployed. Request framing only a
real server produces (a chunked body) and the production error pages are checked here."""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.db import connection

from arena.accounts.services import token_create
from arena.wsgi import application

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server() -> Iterator[int]:
    """gunicorn, one process, DEBUG off, on this test's (committed) database."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgresql://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    else:
        url = f"sqlite:///{db['NAME']}"
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": url, "DEBUG": "false"}
    for name in ("CELERY_BROKER_URL", "CACHE_URL"):  # no tasks; throttle counts of its own
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "arena.wsgi", f"--bind=127.0.0.1:{port}",
         "--workers=1", "--worker-class=gthread", "--threads=2", "--log-level=warning"],
        cwd=ROOT, env=env,
    )
    try:
        for _ in range(300):  # bounded: 30 s
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(20)


def _call(port: int, method: str, path: str, body: Any = None,
          headers: dict[str, str] | None = None, chunked: bool = False) -> tuple[int, Any, str]:
    """(status, JSON body or None, Content-Type)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", **(headers or {})}
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    conn.request(method, path, body, headers, encode_chunked=chunked)
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    content_type = response.getheader("Content-Type", "")
    parsed = json.loads(raw) if content_type == "application/json" else None
    return response.status, parsed, content_type


def _pieces(data: bytes, size: int) -> Iterator[bytes]:
    return (data[i:i + size] for i in range(0, len(data), size))


def test_a_chunked_json_body_is_read_not_taken_as_empty(server: int) -> None:
    body = json.dumps({"username": "chunky", "password": "a long pass 42"}).encode()
    status, answer, _ = _call(server, "POST", "/api/accounts/", _pieces(body, 7), chunked=True)
    assert status == 201, answer
    assert answer["username"] == "chunky"


def test_a_chunked_body_over_the_size_limit_is_a_413(server: int, alice: Any) -> None:
    _, key = token_create(user=alice)
    huge = json.dumps({"options": {"x": "a" * 3_000_000}}).encode()  # limit: 2.5 MB
    status, answer, _ = _call(server, "POST", "/api/games/", _pieces(huge, 65536),
                              {"Authorization": f"Token {key}"}, chunked=True)
    assert status == 413, answer
    assert answer["code"] == "request_too_large"
    status, answer, _ = _call(server, "POST", "/api/games/", huge,
                              {"Authorization": f"Token {key}"})
    assert status == 413, answer
    assert answer["code"] == "request_too_large"


def test_a_server_that_cannot_dechunk_gets_a_411_not_an_empty_body() -> None:
    """The development server (wsgiref) passes a chunked body on undecoded, without
    ``wsgi.input_terminated``."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST", "PATH_INFO": "/api/accounts/",
        "CONTENT_TYPE": "application/json", "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": io.BytesIO(b"5\r\n{}   \r\n0\r\n\r\n"),
    }
    setup_testing_defaults(environ)
    environ.pop("CONTENT_LENGTH", None)
    seen: list[str] = []
    body = b"".join(application(environ, lambda status, headers: seen.append(status)))
    assert seen == ["411 Length Required"]
    assert json.loads(body)["code"] == "length_required"


def test_production_errors_under_api_are_json_and_html_elsewhere(server: int) -> None:
    deep = ("[" * 948 + "]" * 948).encode()
    status, answer, _ = _call(server, "POST", "/api/accounts/", deep)
    assert (status, answer["code"]) == (400, "parse_error")
    status, answer, _ = _call(server, "GET", "/api/games/", headers={"Host": "evil.example"})
    assert (status, answer["code"]) == (400, "bad_request")
    status, _, content_type = _call(server, "GET", "/admin/login/",
                                    headers={"Host": "evil.example"})
    assert status == 400
    assert content_type.startswith("text/html")
    status, answer, _ = _call(server, "GET", "/api/")
    assert status == 200
    assert answer["docs"] == "/api/docs/"
    status, answer, _ = _call(server, "GET", "/api/no/such/thing/")
    assert (status, answer["code"]) == (404, "not_found")
    status, _, content_type = _call(server, "GET", "/no/such/thing/")
    assert status == 404
    assert content_type.startswith("text/html")
