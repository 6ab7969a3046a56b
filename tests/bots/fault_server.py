"""A bot server that misbehaves on purpose: a real HTTP/1.1 server on 127.0.0.1 for tests.

Hand-written on asyncio streams (not a web framework) so it can do what frameworks prevent:
answer late, drip bytes, reset the connection, send garbage or 10 MB. Each request's mode is
the first segment of its path (``/drip``, ``/status/503``) or, for ``/``, the server's own
``mode``. Every request is recorded (headers and body) so tests can check what was sent.

    with FaultServer(mode="ok") as bot:
        transport.post(bot.url, ...)            # the server's mode
        transport.post(bot.url_for("drip"), ...)  # one mode by path

Modes:
  ok              200 {"move": <first legal move>} (``{"move": null}`` without legal moves)
  slow[/<s>]      like ok, after ``delay`` (or s) seconds
  budget[/<ms>]   like ok, ms (default 70) before the payload's ``budget_ms`` runs out: a bot
                  that thinks as long as it is allowed
  drip[/<s>]      a valid ok answer sent one byte every ``drip_interval`` (or s) seconds
  hang            reads the request and never answers (until the server stops)
  reset           reads the request, then resets the connection (RST)
  hangup          reads the request, then closes the connection without a word
  garbage         answers bytes that are not HTTP
  status[/<n>]    answers status n (default 500) with a JSON error body
  redirect[/<n>]  answers n (default 302) to the cloud metadata address
  not_json        200 with a text body
  deep_json       200 with 60,000 nested "[" (valid-looking, too deep to parse)
  huge            200 with ``huge_size`` bytes (10 MB), Content-Length announced
  huge_chunked    the same, chunked, with no length announced
  empty           204, no body
  malformed_move  200 {"move": "draw please"}
  illegal_move    200 {"move": {"type": "play", "card": "ZZ"}}, not among the legal moves
  no_move         200 {}
  twice_move      200 {"move": <draw>, "move": <first legal move>}: a key given twice
  flaky           fails every other call: calls 1, 3, 5... ok; 2, 4, 6... status 500
  close_idle      like ok, announcing keep-alive, then closes the idle connection 50 ms later
                  (a bot server whose keep-alive is shorter than the caller's)
  close_crossing  like ok on a connection's first request; a later request on the same
                  connection is dropped by closing it (the bot's close crossed the request)
  until_close     200 ok with no length announced, the body ended by closing (HTTP/1.0 style)
  until_reset     like until_close, but the connection is reset (RST) half-way through the body
  continue        an interim 100 Continue, then the ok answer
  status_huge     500 announcing a 10 MB body
  header_flood    200, then one header whose value never ends (``huge_size`` bytes of it)
The connection is kept alive after every complete answer, as a real bot's would be.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

MODES = (
    "ok",
    "close_idle",
    "close_crossing",
    "until_close",
    "until_reset",
    "continue",
    "status_huge",
    "header_flood",
    "slow",
    "budget",
    "drip",
    "hang",
    "reset",
    "hangup",
    "garbage",
    "status",
    "redirect",
    "not_json",
    "deep_json",
    "nan_json",
    "huge",
    "huge_chunked",
    "empty",
    "malformed_move",
    "illegal_move",
    "no_move",
    "twice_move",
    "flaky",
)
METADATA_URL = "http://169.254.169.254/latest/meta-data/"
_REASONS = {
    200: "OK",
    204: "No Content",
    301: "Moved Permanently",
    302: "Found",
    307: "Temporary Redirect",
    308: "Permanent Redirect",
    500: "Internal Server Error",
}


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FaultServer:
    mode: str = "ok"
    delay: float = 3.0
    drip_interval: float = 0.05
    huge_size: int = 10 * 1024 * 1024
    host: str = "127.0.0.1"
    tls: ssl.SSLContext | None = None  # serve https with this context
    bind_port: int = 0  # 0: any free port (a restart binds the port it had)
    requests: list[RecordedRequest] = field(default_factory=list)
    calls: int = 0
    connections: int = 0

    def __post_init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._flaky_count = 0
        self.port = 0
        self._lock = threading.Lock()

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> FaultServer:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fault-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fault server did not start")
        return self

    async def _start(self) -> None:
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, self.host, self.bind_port,
                                                  ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        if self._loop is None:
            return
        loop = self._loop

        async def shutdown() -> None:
            assert self._server is not None and self._stopping is not None
            self._stopping.set()
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        loop.close()
        self._loop = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}/"

    def url_for(self, mode: str) -> str:
        return f"{self.url}{mode}"

    # -- HTTP -------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self._lock:
            self.connections += 1
        answered = 0
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                with self._lock:
                    self.requests.append(request)
                    self.calls += 1
                if answered and self._mode_of(request)[0] == "close_crossing":
                    break
                answered += 1
                keep = await self._answer(request, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(length) if length else b""
        return RecordedRequest(method, path, headers, body)

    def _mode_of(self, request: RecordedRequest) -> tuple[str, str]:
        segments = [s for s in request.path.split("?", 1)[0].split("/") if s]
        if segments and segments[0] in MODES:
            return segments[0], segments[1] if len(segments) > 1 else ""
        return self.mode, ""

    @staticmethod
    def _response(
        status: int, body: bytes, content_type: str = "application/json", extra: str = ""
    ) -> bytes:
        reason = _REASONS.get(status, "Status")
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n"
        )
        return head.encode("latin-1") + body

    @staticmethod
    def _first_legal(request: RecordedRequest) -> Any:
        try:
            payload = request.json()
        except ValueError:
            return None
        moves = payload.get("legal_moves") if isinstance(payload, dict) else None
        return moves[0] if moves else None

    def _ok(self, request: RecordedRequest) -> bytes:
        body = json.dumps({"move": self._first_legal(request)}).encode()
        return self._response(200, body)

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        mode, arg = self._mode_of(request)
        if mode == "flaky":
            with self._lock:
                self._flaky_count += 1
                failing = self._flaky_count % 2 == 0
            mode = "status" if failing else "ok"
        if mode == "slow":
            await asyncio.sleep(_seconds(arg, self.delay))
            mode = "ok"
        if mode == "budget":
            budget = request.json().get("budget_ms", 0) if request.body else 0
            await asyncio.sleep(max(0.0, budget - _seconds(arg, 70)) / 1000)
            mode = "ok"
        if mode == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return False
        if mode in ("reset", "hangup"):
            if mode == "reset":
                _reset_on_close(writer)
            writer.close()
            return False
        if mode == "drip":
            for byte in self._ok(request):
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(_seconds(arg, self.drip_interval))
            return True
        if mode == "close_crossing":
            mode = "ok"
        if mode == "close_idle":
            writer.write(self._ok(request))
            await writer.drain()
            await asyncio.sleep(0.05)
            return False
        if mode == "until_close":
            body = json.dumps({"move": self._first_legal(request)}).encode()
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body)
            await writer.drain()
            return False
        if mode == "until_reset":
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"move\": ")
            await writer.drain()
            await asyncio.sleep(0.02)
            _reset_on_close(writer)
            writer.close()
            return False
        if mode == "continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + self._ok(request))
            await writer.drain()
            return True
        if mode == "status_huge":
            writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n\r\n"
                         % self.huge_size + b"e" * 65536)
            await writer.drain()
            return False
        if mode == "header_flood":
            writer.write(b"HTTP/1.1 200 OK\r\nX-Flood: ")
            sent = 0
            while sent < self.huge_size:
                writer.write(b"a" * 65536)
                await writer.drain()
                sent += 65536
            return False
        if mode == "huge_chunked":
            head = (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            writer.write(head)
            chunk = b"a" * 65536
            sent = 0
            while sent < self.huge_size:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
                sent += len(chunk)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        writer.write(self._canned(mode, arg, request))
        await writer.drain()
        return mode != "garbage"

    def _canned(self, mode: str, arg: str, request: RecordedRequest) -> bytes:
        if mode == "ok":
            return self._ok(request)
        if mode == "garbage":
            return b"SSH-2.0-OpenSSH_9.6\r\n\x00\xff not http at all\r\n\r\n"
        if mode == "status":
            status = int(arg) if arg.isdigit() else 500
            return self._response(status, b'{"error": "the bot is unwell"}')
        if mode == "redirect":
            status = int(arg) if arg.isdigit() else 302
            return self._response(status, b"", extra=f"Location: {METADATA_URL}\r\n")
        if mode == "not_json":
            return self._response(200, b"<html>I am a web page</html>", "text/html")
        if mode == "deep_json":
            return self._response(200, b"[" * 60_000)
        if mode == "nan_json":  # what Python's json module writes for a NaN: not JSON
            return self._response(200, b'{"move": NaN, "score": Infinity}')
        if mode == "huge":
            return self._response(200, b'{"move": "' + b"a" * self.huge_size + b'"}')
        if mode == "empty":
            return b"HTTP/1.1 204 No Content\r\n\r\n"
        if mode == "malformed_move":
            return self._response(200, b'{"move": "draw please"}')
        if mode == "illegal_move":
            return self._response(200, b'{"move": {"type": "play", "card": "ZZ"}}')
        if mode == "no_move":
            return self._response(200, b"{}")
        if mode == "twice_move":
            legal = json.dumps(self._first_legal(request)).encode()
            return self._response(200, b'{"move": {"type": "draw"}, "move": ' + legal + b"}")
        raise ValueError(f"unknown fault mode {mode!r}")


def _reset_on_close(writer: asyncio.StreamWriter) -> None:
    """SO_LINGER with a zero timeout: the writer's close() then sends RST instead of FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _seconds(arg: str, default: float) -> float:
    try:
        return float(arg) if arg else default
    except ValueError:
        return default


def refused_url() -> tuple[str, socket.socket]:
    """A URL on 127.0.0.1 where nothing listens: a bound, never-listening socket holds the port
    (so no other test can take it) and every connection to it is refused. Close the socket
    when done."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    return f"http://127.0.0.1:{holder.getsockname()[1]}/", holder
