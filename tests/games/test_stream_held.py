"""A stream holds back a game whose rows are not settled yet (``games.stream``), and only that
game: the turn of another game it follows goes out as soon as its move is heard, without
waiting for the held game's next look (seen in bench/waiting.py: a held game sent one wake in
six through a read on a thread, and those made the wake-up's tail)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from games import services, stream, stream_api
from games.models import Game
from tests.games.conftest import client_for, move_for_the_awaited

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def full_reads(
    alice: Any, bob: Any, asgi_waits: None, monkeypatch: pytest.MonkeyPatch
) -> list[set[int] | None]:
    """Bob's streams open with a second running game of his held (as if its rows had not
    settled at the first read); every full read (``stream.read``) they make is listed."""
    game = services.game_create(user=alice, options={"single_hand": True}, seats=2, join=True)
    services.seat_join(game_id=game.pk, user=bob, index=None, bot_id=None)
    services.game_start(game_id=game.pk, user=alice)
    opened, read, reads = stream.open_stream, stream.read, []

    def open_with_a_held_game(**kwargs: Any) -> Any:
        state, first = opened(**kwargs)
        state.held.add(game.pk)
        return state, first

    def counted_read(state: stream.StreamState, changed: set[int] | None = None) -> Any:
        reads.append(changed)
        return read(state, changed)

    monkeypatch.setattr(stream, "open_stream", open_with_a_held_game)
    monkeypatch.setattr(stream, "read", counted_read)
    return reads


def events_of(chunk: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in chunk.splitlines() if line]


def test_a_turn_goes_out_at_once_while_another_game_waits_for_its_rows(
    running_game: dict[str, Any], alice: Any, bob: Any, full_reads: list[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game_id = running_game["id"]
    monkeypatch.setattr(stream_api, "HELD_FIRST_SECONDS", 60.0)  # its next look: far off
    clients = {0: client_for(alice), 1: client_for(bob)}

    def a_move() -> tuple[int, int | None]:
        """A move in ``game_id``: the version it made, and the seat awaited then."""
        version = move_for_the_awaited(game_id, clients)
        return version, Game.objects.get(pk=game_id).awaiting

    async def bob_streams() -> list[int]:
        events = stream_api._events(bob.pk, None, False)
        turns_seen = []
        try:
            await events.__anext__()  # the snapshot
            for _ in range(12):
                version, awaiting = await sync_to_async(a_move)()
                if awaiting != 1:
                    continue
                chunk = await asyncio.wait_for(events.__anext__(), 10)
                turns = [e for e in events_of(chunk) if e["type"] == "turn"]
                assert [(t["game"], t["version"]) for t in turns] == [(game_id, version)]
                turns_seen.append(version)
        finally:
            await events.aclose()
        return turns_seen

    assert async_to_sync(bob_streams)(), "no move passed the turn to bob"
    assert full_reads == []  # every turn went out without the held game's read


def test_a_held_game_is_looked_at_again_on_its_own_with_no_change_heard(
    bob: Any, full_reads: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_api, "HELD_FIRST_SECONDS", 0.05)

    async def bob_streams() -> None:
        events = stream_api._events(bob.pk, None, False)
        await events.__anext__()  # the snapshot
        following = asyncio.ensure_future(events.__anext__())
        for _ in range(100):
            if full_reads:
                break
            await asyncio.sleep(0.05)
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await events.aclose()

    async_to_sync(bob_streams)()
    assert full_reads[:1] == [set()]  # the held game's look: no change, only the rows
