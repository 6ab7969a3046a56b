"""Hidden information around a drawn card and a Wild Draw Four challenge.

A drawn card's playability stays with the drawer (the drawer always decides, playable or not),
and a challenged Wild Draw Four player's hand is shown to the challenger alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.uno import (
    GameState,
    IllegalMove,
    Move,
    Options,
    apply,
    apply_recorded,
    full_view,
    legal_moves,
    new_game,
    replay,
    view,
)
from games.uno.scenario import scenario
from games.uno.state import DRAWN

from .conftest import ACCEPT, CHALLENGE, DRAW, KEEP, catch, play, random_game

HANDS = [["G1", "B2"], ["B1", "Y4"], ["B3", "G9"]]


def _after_draw(drawn: str) -> GameState:
    state = scenario(Options(players=3), hands=HANDS, top="R3", deck=[drawn, "Y1", "Y2"])
    apply(state, 0, DRAW)
    return state


def test_opponents_views_and_the_public_log_are_the_same_whether_the_drawn_card_plays_or_not(
) -> None:
    playable, unplayable = _after_draw("R7"), _after_draw("Y7")
    log: dict[str, list[tuple[int, dict[str, Any]]]] = {"R7": [], "Y7": []}
    for state, card in ((playable, "R7"), (unplayable, "Y7")):
        log[card].append((0, DRAW.to_json()))
        assert state.phase == DRAWN and state.awaiting == 0
    for seat in (1, 2):
        assert view(playable, seat) == view(unplayable, seat)
        assert view(playable, seat)["pending"] == {"type": "drawn", "seat": 0}
    # The drawer alone sees the card, and whether it may play it.
    assert view(playable, 0)["pending"]["card"] == "R7"
    assert view(unplayable, 0)["pending"]["card"] == "Y7"
    assert legal_moves(playable, 0) == [play("R7"), KEEP]
    assert legal_moves(unplayable, 0) == [KEEP]
    # Keeping looks the same to everyone else too, and so does the public move log.
    for state, card in ((playable, "R7"), (unplayable, "Y7")):
        apply(state, 0, KEEP)
        log[card].append((0, KEEP.to_json()))
    assert log["R7"] == log["Y7"]
    for seat in (1, 2):
        assert view(playable, seat) == view(unplayable, seat)


def test_every_single_card_draw_leaves_the_drawer_to_play_or_keep() -> None:
    def check(state: GameState, seat: int, move: Move) -> None:
        if move.type == "draw":
            # Only a draw from an exhausted deck and discard pile (nothing drawn) passes.
            drew_nothing = not state.deck and len(state.discard) <= 1
            assert (state.phase == DRAWN and state.awaiting == seat) or drew_nothing

    for seed in range(10):
        random_game(Options(players=3, single_hand=True), seed, seed, on_move=check)


def _challenged(hand_after: list[str]) -> GameState:
    """Seat 0 plays a Wild Draw Four, keeping ``hand_after``; seat 1 may challenge."""
    state = scenario(
        Options(players=3),
        hands=[["W4", *hand_after], ["B1", "B5"], ["B3", "G9"]],
        top="R3",
        deck=[f"Y{i}" for i in range(1, 10)],
    )
    apply(state, 0, play("W4", color="blue"))
    return state


def test_the_challenged_hand_is_revealed_in_the_challengers_view_only() -> None:
    state = _challenged(["R1", "G1"])
    before = [view(state, seat)["challenge_reveal"] for seat in range(3)]
    apply(state, 1, CHALLENGE)
    assert before == [None, None, None]
    assert view(state, 1)["challenge_reveal"] == {"seat": 0, "hand": ["R1", "G1"]}
    assert view(state, 0)["challenge_reveal"] is None
    assert view(state, 2)["challenge_reveal"] is None
    assert "challenge_reveal" not in full_view(state)
    assert CHALLENGE.to_json() == {"type": "challenge"}  # the public log names no card


def test_a_failed_challenge_also_shows_the_hand_that_made_the_play_legal() -> None:
    state = _challenged(["G1", "G2"])
    apply(state, 1, CHALLENGE)  # legal play: seat 1 draws 6 and misses the turn
    assert len(state.hands[1]) == 8 and state.awaiting == 2
    assert view(state, 1)["challenge_reveal"] == {"seat": 0, "hand": ["G1", "G2"]}


def test_the_reveal_lasts_until_the_challengers_next_move() -> None:
    state = _challenged(["G1", "G2"])
    apply(state, 1, CHALLENGE)
    apply(state, 2, DRAW)  # other seats' moves leave it shown
    apply(state, 2, KEEP)
    apply(state, 0, DRAW)
    apply(state, 0, KEEP)
    assert view(state, 1)["challenge_reveal"] == {"seat": 0, "hand": ["G1", "G2"]}
    apply(state, 1, DRAW)
    assert view(state, 1)["challenge_reveal"] is None


def test_the_reveal_ends_with_the_challengers_move_after_a_successful_challenge() -> None:
    state = _challenged(["R1", "G1"])
    apply(state, 1, CHALLENGE)  # a bluff: seat 0 draws 4, seat 1 plays on
    assert state.awaiting == 1 and len(state.hands[0]) == 6
    assert view(state, 1)["challenge_reveal"] == {"seat": 0, "hand": ["R1", "G1"]}
    apply(state, 1, play("B5"))
    assert view(state, 1)["challenge_reveal"] is None


def test_the_reveal_shows_the_hand_right_after_the_wild_draw_four_even_if_caught_since() -> None:
    state = _challenged(["R1"])  # penultimate card played without calling Uno
    apply(state, 2, catch(0))  # seat 0 draws 2 before the challenge
    assert len(state.hands[0]) == 3
    apply(state, 1, CHALLENGE)
    assert view(state, 1)["challenge_reveal"] == {"seat": 0, "hand": ["R1"]}


def test_accepting_a_wild_draw_four_reveals_nothing() -> None:
    state = _challenged(["R1", "G1"])
    apply(state, 1, ACCEPT)
    assert [view(state, seat)["challenge_reveal"] for seat in range(3)] == [None, None, None]


def test_the_reveal_round_trips_through_json_and_replays_exactly() -> None:
    state = _challenged(["R1", "G1"])
    apply(state, 1, CHALLENGE)
    data = json.loads(json.dumps(state.to_json()))
    assert data["challenge_reveal"] == {"seat": 1, "player": 0, "hand": ["R1", "G1"]}
    loaded = GameState.from_json(data)
    assert loaded.to_json() == state.to_json()
    assert [view(loaded, s) for s in range(3)] == [view(state, s) for s in range(3)]
    apply(loaded, 1, play("B5"))
    assert loaded.to_json()["challenge_reveal"] is None


def test_a_replayed_game_shows_the_same_reveals() -> None:
    for seed in range(40):
        state, log = random_game(Options(players=3, single_hand=True), seed, seed)
        copy = replay(Options(players=3, single_hand=True), seed, log)
        assert copy.to_json() == state.to_json()


def test_a_state_stored_before_the_reveal_existed_still_loads() -> None:
    state = _challenged(["R1", "G1"])
    data = state.to_json()
    del data["w4_hand"], data["challenge_reveal"]
    loaded = GameState.from_json(data)
    apply(loaded, 1, CHALLENGE)
    assert view(loaded, 1)["challenge_reveal"] == {"seat": 0, "hand": ["R1", "G1"]}


def _legacy_log(log: list[tuple[int, Move]], options: Options, seed: int) -> list[Any]:
    """The log as the engine recorded it before draws waited: no keep after an unplayable
    drawn card."""
    state = new_game(options, seed)
    legacy: list[Any] = []
    for seat, move in log:
        unplayable_keep = move == KEEP and legal_moves(state, seat) == [KEEP]
        apply(state, seat, move)
        if not unplayable_keep:
            legacy.append((seat, move.to_json()))
    return legacy


def test_a_log_recorded_before_draws_waited_for_a_keep_still_replays_to_the_same_game() -> None:
    options = Options(players=3, single_hand=True)
    for seed in range(20):
        state, log = random_game(options, seed, seed)
        legacy = _legacy_log(log, options, seed)
        assert len(legacy) < len(log)
        old = replay(options, seed, legacy)
        assert old.scores == state.scores and old.last_hand == state.last_hand
        assert old.move_count == len(legacy)  # the implied keeps are not moves
        assert old.hands == state.hands and old.deck == state.deck


def test_apply_recorded_is_apply_for_a_log_that_has_its_keeps() -> None:
    state = _after_draw("Y7")
    with pytest.raises(IllegalMove):
        apply_recorded(state, 1, Move("accept"))  # neither legal now nor after a keep
    assert state.phase == DRAWN and state.turn == 0
    apply_recorded(state, 0, KEEP)
    assert state.turn == 1 and state.move_count == 2
