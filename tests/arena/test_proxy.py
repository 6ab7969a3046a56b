"""The buffering proxy of docker-compose.yml: the real nginx, with the project's own config file
(deploy/nginx.conf.template, filled in as the nginx image does), in front of a real gunicorn on
127.0.0.1.

gunicorn's gthread worker gives a connection a thread as soon as it is accepted, so clients that
send their headers slowly hold every thread; through nginx they hold only nginx connections.
Every wait here is bounded (socket timeouts); no test measures how fast anything is."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
GUNICORN_THREADS = 2
SLOW_CLIENTS = 8  # four times gunicorn's threads: directly, they stall everything

pytestmark = pytest.mark.skipif(
    NGINX is None and not IN_CI, reason="nginx is not installed (CI installs it)"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(300):  # bounded: 30 s
        assert process.poll() is None, "the server exited"
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def render(template: str, values: dict[str, str]) -> str:
    """What the nginx image does with /etc/nginx/templates: envsubst of the NGINX_ names."""
    rendered = re.sub(r"\$\{(NGINX_\w+)\}", lambda m: values[m.group(1)], template)
    assert "${" not in rendered
    return rendered


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[int]:
    """One worker with few threads: the attack needs only a few clients to hold them all."""
    port = _free_port()
    env = {**os.environ, "DEBUG": "false", "LOG_LEVEL": "WARNING",
           "SQLITE_PATH": str(tmp_path / "proxy.sqlite3")}
    env.pop("DATABASE_URL", None)  # a database of its own
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True, timeout=300)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "arena.wsgi", f"--bind=127.0.0.1:{port}",
         "--workers=1", "--worker-class=gthread", f"--threads={GUNICORN_THREADS}",
         "--log-level=warning"],
        cwd=ROOT, env=env,
    )
    try:
        _wait_for_port(port, process)
        yield port
    finally:
        process.terminate()
        process.wait(20)


@pytest.fixture
def start_nginx(tmp_path: Path, gunicorn: int) -> Iterator[Callable[..., int]]:
    """Start nginx with the project's server block in front of ``gunicorn``; returns its port."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(
        client_timeout: str = "60s", max_body: str = "1m", upstream_port: int | None = None,
        trust_forwarded_proto: str = "false", read_timeout: str | None = None,
    ) -> int:
        assert NGINX is not None
        port = _free_port()
        prefix = tmp_path / f"nginx-{port}"
        for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (prefix / folder).mkdir(parents=True)
        server = render(TEMPLATE.read_text(), {
            "NGINX_LISTEN": f"127.0.0.1:{port}",
            "NGINX_UPSTREAM": f"127.0.0.1:{upstream_port or gunicorn}",
            "NGINX_CLIENT_TIMEOUT": client_timeout,
            "NGINX_CLIENT_MAX_BODY_SIZE": max_body,
            "NGINX_TRUST_FORWARDED_PROTO": trust_forwarded_proto,
        })
        if read_timeout is not None:  # a test's shortcut to the proxy's answer to a slow app
            assert "proxy_read_timeout 60s;" in server
            server = server.replace("proxy_read_timeout 60s;",
                                    f"proxy_read_timeout {read_timeout};")
        (prefix / "arena.conf").write_text(server)
        # The rest is what the nginx image's own nginx.conf provides around conf.d/.
        (prefix / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "")
            + f"worker_processes 1;\npid {prefix}/nginx.pid;\n"
            "events { worker_connections 256; }\n"
            "http {\n  access_log off;\n"
            + "".join(f"  {kind}_temp_path {prefix}/{folder};\n" for kind, folder in (
                ("client_body", "body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
                ("uwsgi", "uwsgi"), ("scgi", "scgi")))
            + f"  include {prefix}/arena.conf;\n}}\n"
        )
        process = subprocess.Popen(
            [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
             "-e", str(prefix / "error.log"), "-g", "daemon off;"],
        )
        processes.append(process)
        _wait_for_port(port, process)
        return port

    try:
        yield start
    finally:
        for process in processes:
            process.terminate()
            process.wait(20)


@pytest.fixture
def echo_upstream() -> Iterator[int]:
    """An upstream that answers with the X-Forwarded-Proto it was sent (what Django reads
    through SECURE_PROXY_SSL_HEADER); its port."""

    class Echo(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # nginx keeps its upstream connections

        def do_GET(self) -> None:
            body = json.dumps({"proto": self.headers.get("X-Forwarded-Proto")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


class SlowClient:
    """Sends a request's first line, then one more header line a second, never the end."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.sendall(b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stop.wait(1.0):
            try:
                self.sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                return

    def answered(self) -> bool:
        """Whether anything came back (or the connection closed) so far; does not wait."""
        self.sock.setblocking(False)
        try:
            self.sock.recv(1)  # data, or b"" when closed
            return True
        except BlockingIOError:
            return False
        finally:
            self.sock.settimeout(30)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@contextlib.contextmanager
def slow_clients(port: int, count: int = SLOW_CLIENTS) -> Iterator[list[SlowClient]]:
    clients = [SlowClient(port) for _ in range(count)]
    try:
        time.sleep(0.5)  # let the server take them all in (not a measurement)
        yield clients
    finally:
        for client in clients:
            client.close()


def request(port: int, raw: bytes, timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
    """One whole request on a fresh connection; the status, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()


def post(path: str, body: bytes, length: int | None = None) -> bytes:
    length = len(body) if length is None else length
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode() + body


def test_without_the_proxy_slow_header_clients_stall_gunicorn(gunicorn: int) -> None:
    """The attack itself, for the record: what the proxy is for."""
    with slow_clients(gunicorn), pytest.raises(TimeoutError):
        request(gunicorn, get("/healthz/"), timeout=3)  # every thread is held


def test_slow_header_clients_do_not_stall_requests_through_the_proxy(
    start_nginx: Callable[..., int],
) -> None:
    port = start_nginx()
    with slow_clients(port, count=4 * SLOW_CLIENTS) as clients:
        for _ in range(10):
            status, _, body = request(port, get("/healthz/"))
            assert status == 200 and json.loads(body)["status"] == "ok"
            status, _, body = request(port, get("/api/games/"))
            assert status == 401 and json.loads(body)["code"] == "not_authenticated"
        # The slow clients were still there, unanswered, the whole time.
        assert not any(client.answered() for client in clients)


def test_the_proxy_drops_a_client_that_does_not_finish_its_headers_in_time(
    start_nginx: Callable[..., int],
) -> None:
    port = start_nginx(client_timeout="2s")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /healthz/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
        assert sock.recv(65536) == b""  # closed by nginx, well before our 30 s


def test_the_proxy_refuses_a_body_over_the_limit_with_a_json_413(
    start_nginx: Callable[..., int],
) -> None:
    port = start_nginx(max_body="1k")
    # Refused from the Content-Length alone: the body is never read, nor sent upstream.
    status, headers, body = request(port, post("/api/games/", b"", length=10_000_000))
    assert status == 413
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "code": "request_too_large", "detail": "The request body is larger than 1k."
    }
    # Under the limit, the application answers (here: not signed in).
    status, _, body = request(port, post("/api/games/", b'{"seats": 2}' + b" " * 900))
    assert status == 401 and json.loads(body)["code"] == "not_authenticated"


def test_the_proxy_refuses_an_oversized_header_as_the_app_does_with_a_json_431(
    start_nginx: Callable[..., int],
) -> None:
    """It was nginx's own HTML page (400 Request Header Or Cookie Too Large)."""
    port = start_nginx()
    one_long_line = get("/healthz/").replace(
        b"\r\n\r\n", b"\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n")
    many_lines = get("/healthz/").replace(b"\r\n\r\n", b"".join(
        f"\r\nX-Big-{i}: ".encode() + b"a" * 7000 for i in range(6)) + b"\r\n\r\n")
    for raw in (one_long_line, many_lines):
        assert_json_error(port, raw, 431, "headers_too_large")


def assert_json_error(port: int, raw: bytes, status: int, code: str) -> None:
    """``raw`` is answered ``status`` with the API's JSON error body, its ``code`` given."""
    answered, headers, body = request(port, raw)
    assert answered == status
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == code


def test_the_proxy_refuses_an_oversized_request_line_with_a_json_414(
    start_nginx: Callable[..., int],
) -> None:
    assert_json_error(start_nginx(), get("/healthz/?" + "a" * 9000), 414, "uri_too_long")


def test_the_proxy_answers_json_when_the_app_does_not_answer_in_time(
    start_nginx: Callable[..., int],
) -> None:
    with socket.socket() as silent:  # accepts (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = start_nginx(upstream_port=silent.getsockname()[1], read_timeout="1s")
        assert_json_error(port, get("/healthz/"), 504, "gateway_timeout")


def test_the_proxy_answers_json_when_gunicorn_is_not_listening(
    start_nginx: Callable[..., int],
) -> None:
    port = start_nginx(upstream_port=_free_port())  # nothing listens there
    status, headers, body = request(port, get("/healthz/"))
    assert status == 502 and headers["retry-after"] == "5"
    assert json.loads(body)["code"] == "bad_gateway"


def test_the_proxy_passes_the_host_with_its_port_for_the_admin_csrf_check(
    start_nginx: Callable[..., int],
) -> None:
    """The admin login form through the proxy, as a browser posts it: Django compares the
    form's Origin (with its port) with the Host it gets."""
    port = start_nginx()
    status, headers, page = request(port, get("/admin/login/"))
    assert status == 200
    cookie = re.search(r"csrftoken=([^;]+)", headers["set-cookie"]).group(1)  # type: ignore[union-attr]
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    form = b"csrfmiddlewaretoken=" + token + b"&username=nobody&password=wrong"
    raw = (
        f"POST /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        f"Origin: http://127.0.0.1:{port}\r\nCookie: csrftoken={cookie}\r\n"
        f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(form)}\r\n\r\n"
    ).encode() + form
    status, _, body = request(port, raw)
    assert status == 200, body  # the form again, with its error; not a 403 from the CSRF check
    assert b"Please enter the correct username and password" in body


def forwarded_proto(port: int, claimed: str | None) -> str:
    """The X-Forwarded-Proto the upstream got for a plain-HTTP request claiming ``claimed``."""
    claim = f"X-Forwarded-Proto: {claimed}\r\n" if claimed else ""
    raw = (f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{claim}Connection: close\r\n\r\n").encode()
    status, _, body = request(port, raw)
    assert status == 200, body
    return str(json.loads(body)["proto"])


def test_a_plain_http_client_claiming_https_is_passed_on_as_http(
    start_nginx: Callable[..., int], echo_upstream: int,
) -> None:
    """The proxy used to pass the client's own X-Forwarded-Proto on, and with ARENA_HTTPS=true
    the settings trust it (SECURE_PROXY_SSL_HEADER): a plain-HTTP client could pass for https."""
    port = start_nginx(upstream_port=echo_upstream)
    assert forwarded_proto(port, "https") == "http"
    assert forwarded_proto(port, None) == "http"


def test_a_trusted_tls_proxys_forwarded_proto_is_passed_on(
    start_nginx: Callable[..., int], echo_upstream: int,
) -> None:
    """NGINX_TRUST_FORWARDED_PROTO=true (compose: with ARENA_HTTPS=true): a TLS proxy of the
    deployment's own is in front, and its header is what Django must see."""
    port = start_nginx(upstream_port=echo_upstream, trust_forwarded_proto="true")
    assert forwarded_proto(port, "https") == "https"
    assert forwarded_proto(port, None) == "http"  # reached directly: its own scheme
