"""A game played in memory and recorded whole writes exactly the rows the per-move path writes
(ids and timestamps aside): the same seeded game, the same decisions, both ways."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from games import memory, selectors
from games import services as game_services
from games import uno as engine
from games.engine_state import load_state
from games.errors import IllegalMoveError
from games.models import EventKind, Game, GameEvent, GameStatus, MoveRecord, Seat

pytestmark = pytest.mark.django_db

# What a seat's driver does at step i: fail the call, answer an illegal move, or play.
TIMEOUT, ILLEGAL, PLAY = "timeout", "illegal", "play"


def _table(players: list[Any], *, seed: int, options: dict[str, Any], max_strikes: int) -> Game:
    game = game_services.game_create(user=players[0], options=options, seats=len(players),
                                     max_strikes=max_strikes)
    Game.objects.filter(pk=game.pk).update(seed=seed)
    for user in players[1:]:
        game_services.seat_join(game_id=game.pk, user=user)
    return game_services.game_start(game_id=game.pk, user=players[0])


def _decider(seed: int, *, weak_seat: int) -> Callable[[int, int, dict[str, Any]], tuple[str, Any]]:
    """The same decisions for the same positions: ``weak_seat`` fails often (and is forfeited
    at max strikes), the others now and then."""
    rng = random.Random(seed)

    def decide(step: int, seat: int, view: dict[str, Any]) -> tuple[str, Any]:
        roll = rng.random()
        if roll < (0.3 if seat == weak_seat else 0.02):
            return TIMEOUT, None
        if roll > 0.97:
            held = set(view["hand"])
            card = next(c for c in ("R0", "R1", "G2", "B3", "Y4", "R5", "B9") if c not in held)
            return ILLEGAL, {"type": "play", "card": card}
        return PLAY, engine.random_move(view["legal_moves"], rng)

    return decide


def _per_move(game_id: int, decide: Callable[..., tuple[str, Any]], limit: int) -> None:
    for step in range(limit):
        game = Game.objects.get(pk=game_id)
        if game.status != GameStatus.RUNNING:
            return
        seat, version = game.awaiting, game.version
        view = engine.view(load_state(game), seat)
        what, move = decide(step, seat, view)
        if what == PLAY:
            game.forfeited_seats = Seat.objects.filter(game_id=game_id, forfeited=True).count()
            game_services.move_play(game_id=game_id, seat=seat, move=move,
                                    expected_version=version, seen=game)
            continue
        if what == ILLEGAL:
            with pytest.raises(IllegalMoveError):
                game_services.move_play(game_id=game_id, seat=seat, move=move,
                                        expected_version=version)
        assert game_services.seat_default(game_id=game_id, seat=seat, expected_version=version,
                                          reason=what)


def _played_in_memory(game_id: int, decide: Callable[..., tuple[str, Any]], limit: int,
                      checkpoint: int = -1) -> memory.MemoryGame:
    """The game played in memory by ``decide``, for at most ``limit`` steps; a stretch
    recorded at step ``checkpoint`` (if any), the rest not recorded."""
    played = memory.MemoryGame.load(game_id)
    for step in range(limit):
        if not played.running:
            break
        if step == checkpoint:  # a stretch recorded mid-game, then the game goes on
            assert memory.stretch_record(played=played)
        seat = played.awaiting
        what, move = decide(step, seat, played.view(seat))
        if what == PLAY:
            played.play(seat, move)
            continue
        if what == ILLEGAL:
            with pytest.raises(IllegalMoveError):
                played.play(seat, move)
        assert played.default(seat, reason=what)
    return played


def _in_memory(game_id: int, decide: Callable[..., tuple[str, Any]], limit: int,
               checkpoint: int) -> None:
    played = _played_in_memory(game_id, decide, limit, checkpoint)
    assert memory.stretch_record(played=played)
    game = Game.objects.get(pk=game_id)
    if game.is_over:  # the replay made in memory is the one read from the database
        assert played.replay() == selectors.game_replay(game=game)


def _rows(game_id: int) -> dict[str, Any]:
    game = Game.objects.get(pk=game_id)
    return {
        "game": {f: getattr(game, f) for f in (
            "status", "end_reason", "options", "seed", "state", "rng", "version", "move_count",
            "awaiting", "hand_number", "scores", "winner", "turn_seconds", "max_strikes")}
        | {"deadline": game.turn_deadline is not None, "finished": game.finished_at is not None},
        "moves": list(MoveRecord.objects.filter(game_id=game_id).order_by("number")
                      .values_list("number", "version", "seat", "move", "source")),
        "events": list(GameEvent.objects.filter(game_id=game_id).order_by("version")
                       .values_list("version", "kind", "seat", "data")),
        "seats": list(Seat.objects.filter(game_id=game_id).order_by("index")
                      .values_list("index", "user_id", "strikes", "forfeited")),
        "replay": {k: v for k, v in selectors.game_replay(game=game).items()
                   if k not in ("game", "moves")} if game.is_over else None,
        "replay_moves": [{k: v for k, v in m.items() if k != "created_at"}
                         for m in selectors.game_replay(game=game)["moves"]]
        if game.is_over else None,
    }


@pytest.mark.parametrize(("options", "seed", "limit"), [
    ({"single_hand": True}, 11, 5000),  # played to the end
    ({}, 12, 5000),  # hands to 500 points, with a forfeited seat played by the server
    ({"stacking": True, "seven_o": True}, 13, 120),  # left running: a stretch
])
def test_a_game_played_in_memory_writes_the_rows_the_per_move_path_writes(
    alice: Any, bob: Any, charlie: Any, options: dict[str, Any], seed: int, limit: int
) -> None:
    players = [alice, bob, charlie]
    per_move = _table(players, seed=seed, options=options, max_strikes=3)
    in_memory = _table(players, seed=seed, options=options, max_strikes=3)
    _per_move(per_move.pk, _decider(seed, weak_seat=2), limit)
    _in_memory(in_memory.pk, _decider(seed, weak_seat=2), limit, checkpoint=40)
    expected, got = _rows(per_move.pk), _rows(in_memory.pk)
    for part in ("game", "replay"):  # field by field first: a clearer failure
        for key, value in (expected[part] or {}).items():
            assert (part, key, got[part][key]) == (part, key, value)
    assert got == expected
    assert expected["moves"] and any(e[1] == EventKind.STRIKE for e in expected["events"])
    if limit == 5000:
        assert expected["game"]["status"] == GameStatus.FINISHED
        assert any(e[1] == EventKind.FORFEITED for e in expected["events"])


def test_a_stretch_is_not_recorded_over_a_change_made_meanwhile(alice: Any, bob: Any) -> None:
    game = _table([alice, bob], seed=5, options={"single_hand": True}, max_strikes=3)
    played = memory.MemoryGame.load(game.pk)
    for _ in range(3):
        seat = played.awaiting
        played.play(seat, engine.random_move(played.view(seat)["legal_moves"], random.Random(1)))
    game_services.game_abort(game_id=game.pk)  # staff ended it meanwhile
    aborted = _rows(game.pk)
    assert memory.stretch_record(played=played) is False
    assert _rows(game.pk) == aborted  # nothing of the stretch was written
    assert not MoveRecord.objects.filter(game_id=game.pk).exists()


def test_games_recorded_together_write_each_its_own_rows_and_skip_one_changed_meanwhile(
    alice: Any, bob: Any, charlie: Any
) -> None:
    """``stretches_record`` (a driver's games that ended while it recorded): the same rows as
    one game at a time, and a game someone changed meanwhile is left as it is."""
    seeds = (21, 22, 23)
    alone = [_table([alice, bob, charlie], seed=s, options={"single_hand": True}, max_strikes=3)
             for s in seeds]
    together = [_table([alice, bob, charlie], seed=s, options={"single_hand": True},
                       max_strikes=3) for s in seeds]
    for game, seed in zip(alone, seeds, strict=True):
        _in_memory(game.pk, _decider(seed, weak_seat=1), 5000, checkpoint=-1)
    played = [_played_in_memory(game.pk, _decider(seed, weak_seat=1), 5000)
              for game, seed in zip(together, seeds, strict=True)]
    game_services.game_abort(game_id=together[1].pk)  # staff ended the second meanwhile
    aborted = _rows(together[1].pk)

    assert memory.stretches_record(played=played) == [True, False, True]
    for i in (0, 2):
        assert _rows(together[i].pk) == _rows(alone[i].pk)
    assert _rows(together[1].pk) == aborted
    assert not MoveRecord.objects.filter(game_id=together[1].pk).exists()


def test_a_driver_that_dies_mid_game_leaves_the_game_at_its_start_version(
    alice: Any, bob: Any
) -> None:
    game = _table([alice, bob], seed=6, options={"single_hand": True}, max_strikes=3)
    before = _rows(game.pk)
    played = memory.MemoryGame.load(game.pk)
    for _ in range(10):
        seat = played.awaiting
        played.play(seat, engine.random_move(played.view(seat)["legal_moves"], random.Random(2)))
    del played  # the driver died: nothing recorded
    assert _rows(game.pk) == before
    stored = Game.objects.get(pk=game.pk)
    assert stored.status == GameStatus.RUNNING and stored.turn_deadline is not None
