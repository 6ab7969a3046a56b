"""A stream learns of a new game of its user from the game's NOTIFY. Until it has, its cursor
could pass that game's rows (another game's row delivered meanwhile); a client resuming from
such a cursor would have the new game's ``started`` skipped for good, since the resumed stream
takes every row at or before the cursor as delivered. So every read also reads the user's
seats at games open or running, in the same snapshot, and follows any game it did not know
before the cursor moves (``games.stream``)."""

from __future__ import annotations

from typing import Any

import pytest

from games import rows, services, stream
from games.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


def a_started_game(alice: Any, bob: Any) -> Game:
    game = services.game_create(user=alice, options={"single_hand": True}, seats=2, join=True)
    services.seat_join(game_id=game.pk, user=bob, index=None, bot_id=None)
    return services.game_start(game_id=game.pk, user=alice)


def starts_of(events: list[dict[str, Any]], game: Game) -> int:
    return sum(1 for e in events if e["type"] == "started" and e["game"] == game.pk)


def test_a_resume_gets_the_start_of_a_game_the_stream_had_not_heard_of(alice, bob):
    first = a_started_game(alice, bob)
    state, opened = stream.open_stream(user_id=bob.pk, since=None)
    unheard = a_started_game(alice, bob)  # its NOTIFY never reaches this stream
    services.game_abort(game_id=first.pk)  # a row past the unheard game's start
    read = stream.read(state, {first.pk})
    assert [e["type"] for e in read if e["game"] == first.pk] == ["ended"]

    _, resumed = stream.open_stream(user_id=bob.pk, since=state.cursor)
    assert starts_of(opened + read + resumed, unheard) == 1


def test_a_read_follows_a_game_it_had_not_heard_of_and_sends_its_start_first(alice, bob):
    first = a_started_game(alice, bob)
    state, _ = stream.open_stream(user_id=bob.pk, since=None)
    unheard = a_started_game(alice, bob)
    services.game_abort(game_id=first.pk)
    read = stream.read(state, {first.pk})
    kinds = [(e["type"], e["game"]) for e in read if e["type"] != "turn"]
    assert kinds == [("started", unheard.pk), ("ended", first.pk)]
    assert unheard.pk in state.games and not state.games[unheard.pk].new


def test_a_fresh_stream_sends_the_start_of_a_game_seated_between_its_first_reads(
    alice, bob, monkeypatch
):
    """The seats are read first, on their own; a game seated and started before the rows'
    read is found among the seats that read carries."""
    seats_read = rows.stream_seats
    started: list[Game] = []

    def seats_then_a_new_game(user_id: int, *, ended_since: Any) -> Any:
        found = seats_read(user_id, ended_since=ended_since)
        started.append(a_started_game(alice, bob))
        return found

    monkeypatch.setattr(rows, "stream_seats", seats_then_a_new_game)
    state, first = stream.open_stream(user_id=bob.pk, since=None)
    assert starts_of(first, started[0]) == 1
    assert started[0].pk in state.games


def test_a_game_over_before_a_fresh_stream_opened_is_not_sent(alice, bob):
    over = a_started_game(alice, bob)
    services.game_abort(game_id=over.pk)
    running = a_started_game(alice, bob)
    state, first = stream.open_stream(user_id=bob.pk, since=None)
    assert {e["game"] for e in first} == {running.pk}
    services.game_abort(game_id=running.pk)
    read = stream.read(state, {running.pk})
    assert all(e["game"] == running.pk for e in read)


def test_a_reread_after_hearing_nothing_finds_the_games_seated_meanwhile_and_their_turns(
    alice, bob
):
    """What a stream does when its process's LISTEN was down (it reads on a timer, and once
    more when LISTEN is back): a game started meanwhile is found, so a first turn of bob's
    does not wait for the turn clock to strike him."""
    first = a_started_game(alice, bob)
    state, _ = stream.open_stream(user_id=bob.pk, since=None)
    unheard = a_started_game(alice, bob)
    read = stream.read(state, None)
    assert starts_of(read, unheard) == 1
    turns = [e for e in read if e["type"] == "turn" and e["game"] == unheard.pk]
    assert len(turns) == (1 if Game.objects.get(pk=unheard.pk).awaiting == 1 else 0)
    assert first.pk in state.games


def test_only_the_seats_taken_since_the_last_read_are_looked_up(alice, bob, monkeypatch):
    asked: list[Any] = []
    events = rows.stream_events

    def recorded(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["joined_since"])
        return events(*args, **kwargs)

    a_started_game(alice, bob)
    state, _ = stream.open_stream(user_id=bob.pk, since=None)
    monkeypatch.setattr(rows, "stream_events", recorded)
    for _ in range(2):
        before = state.seats_read_at
        stream.read(state, None)
        assert asked.pop() == before - stream.CLOCK_SKEW
        assert state.seats_read_at > before


def test_a_stream_following_no_game_yet_finds_one_on_a_reread(alice, bob):
    state, first = stream.open_stream(user_id=bob.pk, since=None)
    assert first == [] and not state.games
    game = a_started_game(alice, bob)
    assert starts_of(stream.read(state, None), game) == 1
