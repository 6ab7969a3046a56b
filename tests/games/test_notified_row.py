"""The game-change NOTIFY carries the new row (migration 0008), so a stream in another process
than the mover's builds the turn it owes without reading the game; a row too long for a NOTIFY
is left out, and the move still commits."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from django.db.models import F

from games import listen, recent, rows, selectors, stream, stream_api
from games.models import Game
from games.notify import CHANNEL, Change
from games.recent import GAME_FIELDS
from tests.games.conftest import client_for, move_for_the_awaited

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@contextmanager
def listening() -> Iterator[psycopg.Connection[Any]]:
    """A connection of its own that LISTENs, as another process's hub does."""
    with psycopg.connect(**listen._connection_params(), autocommit=True) as other:
        other.execute(f"LISTEN {CHANNEL}")
        yield other


def heard_of(other: psycopg.Connection[Any], game_id: int, version: int) -> Change:
    for note in other.notifies(timeout=10):
        parsed = Change.from_payload(note.payload)
        if parsed is not None and parsed[0] == game_id and parsed[1].version == version:
            return parsed[1]
    raise AssertionError(f"game {game_id} version {version} was not heard of")


def test_the_notify_carries_the_row_a_read_gives(
    running_game: dict[str, Any], alice: Any, bob: Any
) -> None:
    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    with listening() as other:
        version = move_for_the_awaited(game_id, clients)
        change = heard_of(other, game_id, version)
    assert change.row is not None
    notified, stored = rows.notified_game(change.row), Game.objects.get(pk=game_id)
    for field in GAME_FIELDS:
        assert getattr(notified, field.attname) == getattr(stored, field.attname), field.name
    for seat in (0, 1):  # what a view is made of is all there
        assert selectors.game_view(game=notified, seat=seat) == selectors.game_view(
            game=stored, seat=seat)


def test_a_row_too_long_for_a_notify_is_left_out_and_the_change_commits(
    running_game: dict[str, Any]
) -> None:
    game_id = running_game["id"]
    with listening() as other:
        Game.objects.filter(pk=game_id).update(
            scores=["x" * 9000], version=F("version") + 1)  # over NOTIFY's 8000 bytes
        version = Game.objects.get(pk=game_id).version
        change = heard_of(other, game_id, version)
    stored = Game.objects.get(pk=game_id)
    assert change.row is None
    assert change == Change(version, stored.awaiting, "running")


def a_move_passing_the_turn(
    game_id: int, users: tuple[Any, Any]
) -> tuple[stream.StreamState, int, int, Change]:
    """Moves until one passes the turn to the other seat (a skip or a draw may not), each
    with the other seat's stream opened before it: that stream's state, its seat, the version
    the move made and the change the NOTIFY told of it."""
    clients = {0: client_for(users[0]), 1: client_for(users[1])}
    for _ in range(100):
        waiter = 1 - Game.objects.get(pk=game_id).awaiting
        state, _first = stream.open_stream(user_id=users[waiter].pk, since=None)
        with listening() as other:
            version = move_for_the_awaited(game_id, clients)
            change = heard_of(other, game_id, version)
        if Game.objects.get(pk=game_id).awaiting == waiter:
            return state, waiter, version, change
    raise AssertionError("no move passed the turn")


def test_a_stream_builds_the_turn_from_the_row_another_process_notified(
    running_game: dict[str, Any], alice: Any, bob: Any
) -> None:
    """No kept row (the move was played elsewhere): the stream's turn comes from the NOTIFY's
    row, and is the turn a read gives."""
    game_id = running_game["id"]
    state, seat, version, change = a_move_passing_the_turn(game_id, (alice, bob))
    recent.forget_all()  # as in a process that did not play the move
    assert rows.recalled_game(game_id, version) is None
    changed, rows_too, heard = stream_api._to_read(state, [(game_id, seat, change)])
    assert changed == {game_id} and not rows_too
    turns = stream.recalled_turns(state, changed, heard)
    assert turns is not None and [t["version"] for t in turns] == [version]
    _read_state, read_first = stream.open_stream(user_id=(alice, bob)[seat].pk, since=None)
    [read_turn] = [event for event in read_first if event["type"] == "turn"]
    assert {k: v for k, v in turns[0].items() if k != "id"} == {
        k: v for k, v in read_turn.items() if k != "id"}


def test_without_a_row_the_stream_reads_the_game_as_before(
    running_game: dict[str, Any], alice: Any, bob: Any
) -> None:
    game_id = running_game["id"]
    state, seat, version, _change = a_move_passing_the_turn(game_id, (alice, bob))
    recent.forget_all()
    rowless = Change(version, seat, "running")  # a NOTIFY without its row
    changed, _rows_too, heard = stream_api._to_read(state, [(game_id, seat, rowless)])
    assert changed == {game_id}
    assert stream.recalled_turns(state, changed, heard) is None  # so the stream reads it
