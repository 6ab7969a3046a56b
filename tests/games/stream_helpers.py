"""A real ASGI server for the stream's tests, and a client reading its events as they come."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

from tests.live_server import live_server


@contextlib.contextmanager
def asgi_server(env: dict[str, str | None] | None = None, **kwargs: Any) -> Iterator[int]:
    """The serving compose runs (``tests.live_server``), on a free port."""
    with live_server(env, **kwargs) as port:
        yield port


class Stream:
    """``GET /api/stream/`` held open: ``next()`` is the next event (heartbeats skipped
    unless asked for). NDJSON, or SSE with ``sse=True`` (each event parsed back to its JSON,
    its ``id`` field checked against the JSON's)."""

    def __init__(self, port: int, key: str, *, since: str | None = None, sse: bool = False,
                 last_event_id: str | None = None, timeout: float = 30) -> None:
        self.sse = sse
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        headers = {"Authorization": f"Token {key}"}
        if sse:
            headers["Accept"] = "text/event-stream"
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        path = "/api/stream/" + (f"?since={since}" if since else "")
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = {k.lower(): v for k, v in self.response.getheaders()}
        self.seen: list[dict[str, Any]] = []
        self.last_id: str | None = None

    def error(self) -> Any:
        return json.loads(self.response.read())

    def next(self, *, heartbeats: bool = False) -> dict[str, Any]:
        while True:
            event = self._read_sse() if self.sse else self._read_line()
            if "id" in event:  # a heartbeat's too: the client's resume point, as an EventSource's
                self.last_id = event["id"]
            if event["type"] == "heartbeat":
                if heartbeats:
                    return event
                continue
            self.seen.append(event)
            return event

    def until(self, wanted: Any, *, limit: int = 10_000, quiet: int = 30) -> dict[str, Any]:
        """The next event ``wanted(event)`` says yes to (bounded: at most ``limit`` events,
        and ``quiet`` heartbeats in a row)."""
        heartbeats = 0
        for _ in range(limit):
            event = self.next(heartbeats=True)
            if event["type"] == "heartbeat":
                heartbeats += 1
                if heartbeats >= quiet:
                    break
                continue
            heartbeats = 0
            if wanted(event):
                return event
        last = [(e["type"], e["game"], e["version"]) for e in self.seen[-10:]]
        raise AssertionError(f"never came; the last seen: {last}")

    def _read_line(self) -> dict[str, Any]:
        line = self.response.readline()
        assert line, "the stream ended"
        return json.loads(line)

    def _read_sse(self) -> dict[str, Any]:
        """The next event; a heartbeat (a comment, with the ``id:`` line beside it if any) as
        ``{"type": "heartbeat"}`` and that id."""
        fields: dict[str, str] = {}
        comment = False
        while True:
            line = self.response.readline()
            assert line, "the stream ended"
            text = line.decode().rstrip("\n")
            if not text:
                if fields.get("data"):
                    break
                if comment:
                    return {"type": "heartbeat", **({"id": fields["id"]} if "id" in fields else {})}
                continue
            if text.startswith(":"):
                comment = True
                continue
            name, _, value = text.partition(": ")
            fields[name] = value
        event = json.loads(fields["data"])
        assert fields["event"] == event["type"]
        assert fields.get("id") == event.get("id")
        return event

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
        self.conn.close()


@contextlib.contextmanager
def open_stream(port: int, key: str, **kwargs: Any) -> Iterator[Stream]:
    stream = Stream(port, key, **kwargs)
    try:
        yield stream
    finally:
        stream.close()
