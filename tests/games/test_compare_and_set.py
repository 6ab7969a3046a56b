"""A plain move is written with one compare-and-set on the version it was decided on; any
other move, a refusal and a lost race take the locked path, which answers with authority."""

from __future__ import annotations

from typing import Any

import pytest

from games import selectors, services
from games.engine_state import load_state
from games.errors import IllegalMoveError, NotYourTurn, StaleVersion
from games.models import Game, MoveRecord, MoveSource
from games.uno import Options
from games.uno.scenario import scenario

pytestmark = pytest.mark.django_db(transaction=True)


def _rigged(alice: Any, bob: Any, hands: list[list[str]], **options: Any) -> Game:
    """A running two-seat game: alice (seat 0) to play on a red 3."""
    game = services.game_create(user=alice, options=options, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    services.game_start(game_id=game.pk, user=alice)
    state = scenario(Options(players=2, **options), hands=hands, top="R3", deck=["Y1", "Y2"])
    Game.objects.filter(pk=game.pk).update(state=state.to_json(), awaiting=state.awaiting)
    return Game.objects.get(pk=game.pk)


def test_a_plain_move_is_written_whole(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob, [["R1", "G7"], ["R5", "B4"]])
    seen = selectors.seat_with_game(game_id=game.pk, user=alice)
    assert seen.game.forfeited_seats == 0
    played = services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                                expected_version=game.version, seen=seen.game)
    stored = Game.objects.get(pk=game.pk)
    assert stored.version == played.game.version == game.version + 1
    assert stored.move_count == 1 and stored.awaiting == 1
    assert load_state(stored).to_json() == played.state.to_json()
    assert stored.turn_deadline is not None and stored.turn_deadline > game.turn_deadline
    record = MoveRecord.objects.get(game=game)
    assert (record.pk, record.number, record.version) == (played.record.pk, 1, stored.version)
    assert record.source == MoveSource.PLAYER


def test_a_move_decided_on_an_old_read_is_stale_and_writes_nothing(
    alice: Any, bob: Any
) -> None:
    game = _rigged(alice, bob, [["R1", "R2", "G7"], ["R5", "B4"]])
    old = selectors.seat_with_game(game_id=game.pk, user=alice).game
    # Meanwhile the same move arrives by another route and wins.
    services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                       expected_version=game.version)
    with pytest.raises(StaleVersion) as stale:
        services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                           expected_version=game.version, seen=old)
    assert stale.value.extra == {"version": game.version + 1}
    assert MoveRecord.objects.filter(game=game).count() == 1


def test_refusals_are_judged_on_the_locked_game(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob, [["R1", "G7"], ["R5", "B4"]])
    seen = selectors.seat_with_game(game_id=game.pk, user=alice).game
    with pytest.raises(IllegalMoveError):
        services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "G7"},
                           expected_version=game.version, seen=seen)
    bobs = selectors.seat_with_game(game_id=game.pk, user=bob).game
    with pytest.raises(NotYourTurn):
        services.move_play(game_id=game.pk, seat=1, move={"type": "play", "card": "R5"},
                           expected_version=game.version, seen=bobs)
    assert Game.objects.get(pk=game.pk).version == game.version


def test_a_finishing_move_records_the_end_like_any_other(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob, [["R1"], ["R5", "B4"]], single_hand=True)
    seen = selectors.seat_with_game(game_id=game.pk, user=alice).game
    played = services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                                expected_version=game.version, seen=seen)
    stored = Game.objects.get(pk=game.pk)
    assert stored.status == "finished" and stored.winner == 0
    assert played.game.status == "finished"
    assert stored.events.filter(kind="finished").exists()


def test_with_a_forfeited_seat_the_server_still_plays_it_at_once(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob, [["R1", "G7"], ["R5", "B4"]])
    game.seats.filter(index=1).update(forfeited=True)
    seen = selectors.seat_with_game(game_id=game.pk, user=alice).game
    assert seen.forfeited_seats == 1
    played = services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                                expected_version=game.version, seen=seen)
    sources = list(MoveRecord.objects.filter(game=game).values_list("source", flat=True))
    assert sources[0] == MoveSource.PLAYER and MoveSource.SERVER in sources[1:]
    assert played.state.awaiting == 0


def test_the_rng_is_rewritten_only_when_cards_are_shuffled(alice: Any, bob: Any) -> None:
    game = services.game_create(user=alice, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    services.game_start(game_id=game.pk, user=alice)
    # One card left to draw: the draw after it reshuffles the discard pile into a new deck.
    state = scenario(Options(players=2), hands=[["R1", "G7"], ["B4", "Y9"]], top="R3",
                     deck=["G2"], discard=["B5", "B6", "B7"])
    data = state.to_json()
    rng = data.pop("rng")
    Game.objects.filter(pk=game.pk).update(state=data, rng=rng, awaiting=state.awaiting)

    def play(user: Any, seat: int, move: dict[str, Any]) -> None:
        seen = selectors.seat_with_game(game_id=game.pk, user=user).game
        services.move_play(game_id=game.pk, seat=seat, move=move, expected_version=seen.version,
                           seen=seen)

    play(alice, 0, {"type": "play", "card": "R1"})
    assert Game.objects.get(pk=game.pk).rng == rng  # no shuffle, not rewritten
    play(bob, 1, {"type": "draw"})  # the last card (G2, not playable)
    play(bob, 1, {"type": "keep"})  # kept: the turn passes
    play(alice, 0, {"type": "draw"})  # an empty deck: the discard pile is shuffled
    stored = Game.objects.get(pk=game.pk)
    assert stored.rng != rng and "rng" not in stored.state
    assert load_state(stored).to_json()["rng"] == stored.rng
