"""Bad input through a real server: gunicorn with DEBUG off, as deployed. Request framing only a
real server produces (a chunked body) and the production error pages are checked here."""

from __future__ import annotations

import http.client
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest

from arena.accounts.services import token_create
from arena.wsgi import application
from tests.live_server import live_server

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server() -> Iterator[int]:
    """gunicorn, one process, DEBUG off, on this test's (committed) database; no tasks, and
    throttle counts of its own (no shared cache)."""
    with live_server({"CACHE_URL": None}, threads=2) as port:
        yield port


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


def test_a_fresh_web_process_lists_the_apis_query_parameters_before_its_first_request() -> None:
    """The list (``core.schema.query_parameters``) is built as the application loads, not by
    the first request with a query string, which waited about half a second for it."""
    code = "import arena.asgi; from core import schema; print('query' in schema._generated)"
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == "True", done.stderr


@pytest.mark.django_db
def test_every_error_body_is_written_in_one_json_style(client: Any) -> None:
    """Answers made outside DRF's views (an unknown endpoint, an unknown query parameter, a
    wrong method on /api/) were written with spaces after every comma and colon, the rest
    compact: one style, as DRF writes it, whoever answers."""
    import json

    answers = [
        client.get("/api/no-such-thing/"),
        client.get("/api/games/?wiat=25", HTTP_AUTHORIZATION="Token nope"),
        client.post("/api/"),
        client.get("/api/games/"),  # DRF's own: 401
    ]
    for answer in answers:
        body = json.loads(answer.content)
        assert answer.content == json.dumps(body, separators=(",", ":"),
                                            ensure_ascii=False).encode(), answer.content
