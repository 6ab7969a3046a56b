"""A stream survives a server restart: the client reconnects with the last event id it got
and misses nothing (and gets nothing twice), though the games went on while the server was
down (played through another server process: on PostgreSQL, woken by NOTIFY)."""

from __future__ import annotations

import pytest

from games.models import EventKind, GameEvent
from tests.games.stream_helpers import asgi_server, open_stream
from tests.games.test_stream import key_of, play_awaited
from tests.live_server import call, free_port, start_a_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

ROWS = {EventKind.STARTED: "started", EventKind.STRIKE: "strike",
        EventKind.FORFEITED: "forfeited", EventKind.FINISHED: "ended",
        EventKind.ABORTED: "ended"}


def rows_of(game_ids: set[int]) -> list[tuple[str, int, int]]:
    found = GameEvent.objects.filter(game_id__in=game_ids, kind__in=list(ROWS))
    return sorted((ROWS[e.kind], e.game_id, e.version) for e in found)


def test_a_stream_resumes_after_a_server_restart_with_nothing_missed(alice, bob):
    alice_key, bob_key = key_of(alice), key_of(bob)
    keys = [alice_key, bob_key]
    env = {"STREAM_HEARTBEAT_SECONDS": "1"}
    port = free_port()
    with asgi_server(env) as other:  # plays while the stream's server is down
        with asgi_server(env, port=port) as first, open_stream(first, bob_key) as stream:
            one = start_a_game(other, alice_key, bob_key)  # heard through NOTIFY
            stream.until(lambda e: e["type"] == "started")
            for _ in range(4):
                play_awaited(other, one["id"], keys)
            view = call(other, "GET", f"/api/games/{one['id']}/view/", key=bob_key)[1]
            if view["view"]["awaiting"] == 1:
                stream.until(lambda e: e["type"] == "turn" and e["version"] == view["version"])
            before = list(stream.seen)
            cursor = stream.last_id
        # The server is gone. Game one ends, game two starts, a third is played through.
        while play_awaited(other, one["id"], keys) is not None:
            pass
        two = start_a_game(other, alice_key, bob_key)
        three = start_a_game(other, alice_key, bob_key)
        while play_awaited(other, three["id"], keys) is not None:
            pass
        with asgi_server(env, port=port) as again, \
                open_stream(again, bob_key, last_event_id=cursor, sse=True) as resumed:
            after = []
            while len([e for e in after if e["type"] == "ended"]) < 2 or not any(
                e["type"] == "started" and e["game"] == two["id"] for e in after
            ):
                after.append(resumed.next())
            view = call(again, "GET", f"/api/games/{two['id']}/view/", key=bob_key)[1]
            if view["view"]["awaiting"] == 1:
                turn = resumed.until(lambda e: e["type"] == "turn")
                assert (turn["game"], turn["version"]) == (two["id"], view["version"])
            assert resumed.next(heartbeats=True)["type"] == "heartbeat"  # and nothing more
    got = [(e["type"], e["game"], e["version"]) for e in before + after if e["type"] != "turn"]
    assert len(got) == len(set(got)), "nothing twice"
    assert sorted(got) == rows_of({one["id"], two["id"], three["id"]}), "nothing missed"
