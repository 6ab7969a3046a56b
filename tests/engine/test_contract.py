"""Engine contract: options and move validation, JSON round-trips, views, replay, defaults."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.uno import (
    GameState,
    IllegalMove,
    MalformedMove,
    Move,
    Options,
    OptionsError,
    UnoError,
    apply,
    default_move,
    full_view,
    legal_moves,
    new_game,
    replay,
    view,
)
from games.uno.scenario import scenario

from .conftest import ACCEPT, DRAW, KEEP, play, random_game


# --- options ---------------------------------------------------------------------------------
def test_options_defaults_are_the_official_rules() -> None:
    assert Options().to_json() == {
        "players": 2,
        "stacking": False,
        "seven_o": False,
        "jump_in": False,
        "draw_until_playable": False,
        "deck_2018": False,
        "start_2022": False,
        "single_hand": False,
        "target_score": 500,
    }


def test_options_round_trip_through_json() -> None:
    opts = Options(players=6, stacking=True, deck_2018=True, target_score=250)
    assert Options.from_json(json.loads(json.dumps(opts.to_json()))) == opts


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"players": 1}, "players"),
        ({"players": 11}, "players"),
        ({"players": True}, "players"),
        ({"players": "4"}, "players"),
        ({"stacking": 1}, "stacking"),
        ({"target_score": 0}, "target_score"),
        ({"target_score": 2.5}, "target_score"),
        ({"colour_blind": True}, "colour_blind"),
    ],
)
def test_options_from_json_rejects_bad_values_naming_the_field(
    data: dict[str, Any], field: str
) -> None:
    with pytest.raises(OptionsError) as info:
        Options.from_json(data)
    assert info.value.field == field and info.value.reason
    assert isinstance(info.value, UnoError)


def test_options_from_json_rejects_non_objects() -> None:
    with pytest.raises(OptionsError):
        Options.from_json([])  # type: ignore[arg-type]


# --- moves -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "move",
    [
        Move("draw"),
        Move("keep"),
        Move("challenge"),
        Move("accept"),
        Move("uno"),
        Move("catch", target=3),
        Move("color", color="blue"),
        Move("play", card="R5"),
        Move("play", card="W4", color="green", uno=True),
        Move("play", card="B7", target=2),
    ],
)
def test_move_round_trips_through_json(move: Move) -> None:
    data = json.loads(json.dumps(move.to_json()))
    assert Move.from_json(data) == move
    assert None not in data.values() and data.get("uno", True) is True


@pytest.mark.parametrize(
    "data",
    [
        "draw",
        None,
        [],
        {},
        {"type": "dance"},
        {"type": "draw", "card": "R5"},
        {"type": "play"},
        {"type": "play", "card": "X9"},
        {"type": "play", "card": 5},
        {"type": "play", "card": "W"},
        {"type": "play", "card": "R5", "color": "red"},
        {"type": "play", "card": "W", "color": "purple"},
        {"type": "play", "card": "R5", "uno": 1},
        {"type": "play", "card": "R5", "target": 1},
        {"type": "catch"},
        {"type": "catch", "target": True},
        {"type": "catch", "target": -1},
        {"type": "color"},
        {"type": "draw", "extra": 1},
        {"type": "uno", "uno": True},
        # Null is no value: a field the move does not have is left out (the schema's enum
        # and types; a bot writer's review found {"type": "draw", "color": null} played).
        {"type": "draw", "color": None},
        {"type": "play", "card": "R5", "color": None},
        {"type": "play", "card": None},
        {"type": "catch", "target": None},
    ],
)
def test_malformed_moves_are_rejected_with_a_reason(data: object) -> None:
    with pytest.raises(MalformedMove) as info:
        Move.from_json(data)
    assert info.value.reason


def test_malformed_and_illegal_are_different_errors() -> None:
    assert not issubclass(MalformedMove, IllegalMove) and not issubclass(IllegalMove, MalformedMove)
    state = new_game(Options(), 1)
    with pytest.raises(MalformedMove):
        apply(state, 0, {"type": "draw"})  # type: ignore[arg-type]


def test_draw_move_never_names_the_drawn_card() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["R7"])
    assert DRAW.to_json() == {"type": "draw"}
    apply(state, 0, DRAW)
    assert state.phase == 1


def test_every_legal_move_applies_and_anything_else_is_illegal() -> None:
    state = new_game(Options(players=3, stacking=True, seven_o=True, jump_in=True), 4)
    for seat in range(3):
        for move in legal_moves(state, seat):
            trial = state.copy()
            apply(trial, seat, move)
    seat = state.awaiting
    assert seat is not None
    with pytest.raises(IllegalMove, match="no seat"):
        legal_moves(state, 7)
    with pytest.raises(IllegalMove):
        apply(state, (seat + 1) % 3, DRAW)


@pytest.mark.parametrize("phase", ["play", "drawn", "color"])
def test_mutating_a_returned_legal_move_list_changes_nothing(phase: str) -> None:
    # legal_moves hands out a list of the caller's own; apply validates against its own cache.
    if phase == "color":
        state = scenario(hands=[["R1", "G2"], ["B3", "Y4"]], top="W", deck=["R5"])
    else:
        state = scenario(hands=[["R1", "G2"], ["B3", "Y4"]], top="R9", deck=["R5"])
        if phase == "drawn":
            apply(state, 0, DRAW)
    seat = state.awaiting
    assert seat is not None
    moves = legal_moves(state, seat)
    expected = list(moves)
    moves.clear()
    moves.append(Move("uno"))
    again = legal_moves(state, seat)  # the cached answer, again as a list of its own
    assert again == expected and again is not moves
    again.reverse()
    assert legal_moves(state, seat) == expected
    with pytest.raises(IllegalMove):
        apply(state, seat, Move("uno"))
    apply(state, seat, expected[0])


# --- state JSON and replay -------------------------------------------------------------------
def test_state_round_trips_through_json_and_continues_identically() -> None:
    state, _ = random_game(Options(players=3), 11, 1, max_moves=40)
    copy = GameState.from_json(json.loads(json.dumps(state.to_json())))
    assert copy.to_json() == state.to_json()
    a, b = random_game_continue(state, 5), random_game_continue(copy, 5)
    assert a.to_json() == b.to_json()


def random_game_continue(state: GameState, moves: int) -> GameState:
    for _ in range(moves):
        seat = state.awaiting
        if seat is None:
            break
        apply(state, seat, default_move(state, seat))
        # default moves draw: the RNG state must be identical for a reshuffle to match
    return state


def test_state_from_json_reads_the_older_list_form_of_the_rng() -> None:
    state, _ = random_game(Options(players=2), 5, 1, max_moves=30)
    data = state.to_json()
    version, internal, gauss = state.rng.getstate()
    older = {**data, "rng": [version, list(internal), gauss]}
    assert GameState.from_json(json.loads(json.dumps(older))).to_json() == data


def test_state_from_json_rejects_a_damaged_rng() -> None:
    data = new_game(Options(), 1).to_json()
    version, words, gauss = data["rng"]
    with pytest.raises(UnoError, match="corrupt game state"):
        GameState.from_json({**data, "rng": [version, words[:-8], gauss]})


@pytest.mark.parametrize(
    "change",
    [
        {"color": 9},
        {"hands": [["R1"]]},
        {"discard": []},
        {"turn": "1"},
        {"turn": 7},
        {"seed": 1.9},
        {"direction": 2},
        {"last_hand": "x"},
        {"scores": [0]},
    ],
)
def test_state_from_json_refuses_a_state_the_rules_cannot_continue(change: dict[str, Any]) -> None:
    data = new_game(Options(players=3), 5).to_json()
    with pytest.raises(UnoError, match="corrupt game state"):
        GameState.from_json({**data, **change})


def test_a_loaded_state_that_shuffles_nothing_keeps_its_stored_rng() -> None:
    state, _ = random_game(Options(players=2), 8, 1, max_moves=20)
    stored = json.loads(json.dumps(state.to_json()))
    loaded = GameState.from_json(stored)
    assert loaded.to_json()["rng"] == stored["rng"]
    # Used (a copy, then a shuffle), it continues exactly as the original does.
    assert loaded.copy().rng.random() == state.copy().rng.random()
    assert loaded.rng.getstate() == state.rng.getstate()


def test_replay_rebuilds_the_state_exactly() -> None:
    state, log = random_game(Options(players=4, seven_o=True), 21, 2)
    assert replay(Options(players=4, seven_o=True), 21, log).to_json() == state.to_json()


@pytest.mark.parametrize("seat", [1.0, True, "1", None])
def test_a_seat_that_is_not_a_whole_number_is_refused_and_changes_nothing(seat: Any) -> None:
    state = scenario(hands=[["R5", "R6", "R1"], ["B1", "B2"]], top="R3", deck=["G1", "G2"],
                     turn=1)
    legal_moves(state, 1)  # the cache now holds seat 1's moves
    before = state.to_json()
    with pytest.raises(IllegalMove, match="no seat"):
        apply(state, seat, DRAW)
    with pytest.raises(IllegalMove, match="no seat"):
        legal_moves(state, seat)
    assert state.to_json() == before


def test_the_last_hand_summary_is_never_shared_with_a_caller() -> None:
    state = scenario(hands=[["R5"], ["B1", "B2"]], top="R3", deck=["G1", "G2", "G3", "G4"] * 2)
    apply(state, 0, Move("play", card="R5"))
    assert state.last_hand is not None
    points = list(state.last_hand["hand_points"])
    data = state.to_json()
    loaded = GameState.from_json(data)
    for summary in (view(state, 1)["last_hand"], state.to_json()["last_hand"], loaded.last_hand,
                    state.copy().last_hand):
        summary["hand_points"].append(999)
    assert state.last_hand["hand_points"] == data["last_hand"]["hand_points"] == points


def test_a_jump_in_while_a_decision_is_pending_says_so() -> None:
    state = scenario(Options(players=3, jump_in=True), hands=[["B1", "B2"], ["B3", "B4"],
                     ["R3", "Y1"]], top="R3", deck=["R9", "G1"])
    apply(state, 0, DRAW)
    with pytest.raises(IllegalMove, match="while a decision is pending"):
        apply(state, 2, Move("play", card="R3"))


def test_copy_is_independent() -> None:
    state = new_game(Options(), 3)
    clone = state.copy()
    apply(clone, clone.turn, DRAW)
    assert state.move_count == 0 and clone.move_count == 1
    assert state.to_json() != clone.to_json()


def test_same_seed_same_game_different_seed_different_deal() -> None:
    assert new_game(Options(), 5).to_json() == new_game(Options(), 5).to_json()
    assert new_game(Options(), 5).to_json()["hands"] != new_game(Options(), 6).to_json()["hands"]


# --- views -----------------------------------------------------------------------------------
VIEW_KEYS = {
    "seat",
    "hand",
    "hand_counts",
    "top",
    "color",
    "direction",
    "turn",
    "awaiting",
    "pending",
    "scores",
    "hand_number",
    "dealer",
    "deck_count",
    "discard_count",
    "finished",
    "winner",
    "legal_moves",
    "last_hand",
    "options",
    "phase",
    "uno_window",
    "move_count",
    "challenge_reveal",
}


def test_view_shows_only_own_hand_and_public_information() -> None:
    state = new_game(Options(players=3), 8)
    data = view(state, 1)
    assert set(data) == VIEW_KEYS
    assert data["hand"] == [c for c in state.to_json()["hands"][1]]
    assert data["hand_counts"] == [len(h) for h in state.hands]
    assert "seed" not in json.dumps(data) and "deck" not in data and "hands" not in data
    json.dumps(data)


def test_view_pending_drawn_card_visible_only_to_drawer() -> None:
    state = scenario(
        Options(players=3), hands=[["G1", "B2"], ["B1"], ["B3"]], top="R3", deck=["R7"]
    )
    apply(state, 0, DRAW)
    assert view(state, 0)["pending"] == {"type": "drawn", "seat": 0, "card": "R7"}
    assert view(state, 1)["pending"] == {"type": "drawn", "seat": 0}


def test_view_challenge_pending_does_not_reveal_whether_the_play_was_legal() -> None:
    state = scenario(
        Options(players=3), hands=[["W4", "R1", "G1"], ["B1"], ["B3"]], top="R3", deck=["R7"]
    )
    apply(state, 0, play("W4", color="blue"))
    pending = view(state, 1)["pending"]
    assert pending == {"type": "challenge", "seat": 1, "player": 0, "penalty": 4}
    assert full_view(state)["pending"]["player_held_color"] is True


def test_view_reports_last_hand_across_automatic_redeal() -> None:
    state = scenario(hands=[["R1"], ["B9"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R1"))
    last = view(state, 1)["last_hand"]
    assert last["winner"] == 0 and last["points"] == 9 and view(state, 1)["hand_number"] == 2


def test_full_view_has_everything() -> None:
    state = new_game(Options(players=2), 8)
    data = full_view(state)
    assert data["seed"] == 8 and len(data["hands"]) == 2 and len(data["deck"]) == len(state.deck)
    json.dumps(data)


# --- default move ----------------------------------------------------------------------------
def test_default_move_draws_then_keeps() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["R7"])
    assert default_move(state, 0) == DRAW
    apply(state, 0, DRAW)
    assert default_move(state, 0) == KEEP


def test_default_move_accepts_wild_draw_four_instead_of_challenging() -> None:
    state = scenario(
        Options(players=3), hands=[["W4", "R1", "G1"], ["B1"], ["B3"]], top="R3",
        deck=["R7", "R7", "R8", "R8"],
    )
    apply(state, 0, play("W4", color="blue"))
    assert default_move(state, 1) == ACCEPT


def test_default_move_chooses_most_held_colour_when_colour_pending() -> None:
    state = scenario(hands=[["G1", "G2", "B1"], ["B1"]], top="W", deck=["R7"])
    assert default_move(state, 0) == Move("color", color="green")


def test_default_move_only_for_the_awaited_seat() -> None:
    state = scenario(hands=[["G1"], ["B1"]], top="R3", deck=["R7"])
    with pytest.raises(IllegalMove):
        default_move(state, 1)


@pytest.mark.parametrize("players", [2, 5, 10])
def test_default_moves_alone_always_legal_and_game_progresses(players: int) -> None:
    opts = Options(players=players, stacking=True, seven_o=True, jump_in=True, deck_2018=True)
    state = new_game(opts, players)
    for _ in range(300):
        seat = state.awaiting
        assert seat is not None
        move = default_move(state, seat)
        assert move in legal_moves(state, seat)
        apply(state, seat, move)
