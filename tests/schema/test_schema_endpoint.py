"""``/api/schema/`` on a real server process: its first requests, arriving together, are all
answered (drf-spectacular loads its extensions lazily, which is not thread-safe: a fresh
process given concurrent schema requests used to answer most of them 500)."""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any

from tests.schema.gunicorn import gunicorn

CONCURRENT = 8


def _get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_fresh_server_answers_concurrent_first_schema_requests_alike() -> None:
    with gunicorn(workers=1, threads=CONCURRENT) as port:
        start = threading.Barrier(CONCURRENT)
        answers: list[Any] = [None] * CONCURRENT

        def fetch(index: int) -> None:
            start.wait()
            answers[index] = _get(port, "/api/schema/?format=json")

        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(CONCURRENT)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        assert [status for status, _ in answers] == [200] * CONCURRENT
        assert len({body for _, body in answers}) == 1
        schema = json.loads(answers[0][1])
        assert "SeatView" in schema["components"]["schemas"]
        # Later requests, in either format, are the same schema.
        status, yaml_body = _get(port, "/api/schema/")
        assert status == 200 and yaml_body.startswith(b"openapi:")
