"""The stream's events against the schema's ``StreamEvent`` (closed: no key it does not
name): real events of real games (started, turns, strikes, a forfeit, the ends), both media
types, and the documented examples."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games import stream
from tests.arena.test_schema_examples import operation, validator
from tests.games.conftest import choose
from tests.games.stream_helpers import asgi_server, open_stream
from tests.games.test_stream import key_of
from tests.live_server import call

pytestmark = pytest.mark.django_db(transaction=True)


def media(kind: str) -> dict[str, Any]:
    return operation("stream")["responses"]["200"]["content"][kind]


def assert_valid(event: dict[str, Any]) -> None:
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(media(stream.NDJSON)["schema"]).iter_errors(event)
    ]
    assert not errors, (event["type"], errors[:5])


def test_the_schema_names_both_media_types_and_its_examples_are_valid_events():
    assert media(stream.SSE)["schema"] == media(stream.NDJSON)["schema"]
    for example in media(stream.NDJSON)["examples"].values():
        assert_valid(example["value"])


def test_every_streamed_event_matches_the_schema(alice, bob):
    rng = random.Random(3)
    keys = [key_of(alice), key_of(bob)]
    with asgi_server({"STREAM_HEARTBEAT_SECONDS": "1"}) as port, \
            open_stream(port, keys[1]) as bobs:
        for turn_seconds, max_strikes in ((600, 3), (1, 1)):  # played out; bob times out
            status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
                "seats": 2, "turn_seconds": turn_seconds, "max_strikes": max_strikes,
                "options": {"single_hand": True}})
            assert status == 201
            call(port, "POST", f"/api/games/{game['id']}/join/", key=keys[1])
            call(port, "POST", f"/api/games/{game['id']}/start/", key=keys[0])
            while True:
                view = call(port, "GET", f"/api/games/{game['id']}/view/", key=keys[0])[1]
                if view["status"] != "running":
                    break
                seat = view["view"]["awaiting"]
                if seat == 1 and turn_seconds == 1:
                    bobs.until(lambda e: e["type"] == "ended")  # his clock runs out
                    continue
                mine = call(port, "GET", f"/api/games/{game['id']}/view/", key=keys[seat])[1]
                call(port, "POST", f"/api/games/{game['id']}/moves/", key=keys[seat], body={
                    "version": mine["version"],
                    "move": choose(rng, mine["view"]["legal_moves"])})
        while sum(e["type"] == "ended" for e in bobs.seen) < 2:
            bobs.until(lambda e: e["type"] == "ended")
        beat = bobs.next(heartbeats=True)
    kinds = {event["type"] for event in bobs.seen}
    assert {"started", "turn", "strike", "forfeited", "ended"} <= kinds
    for event in [*bobs.seen, beat]:
        assert_valid(event)
