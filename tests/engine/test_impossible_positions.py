"""Impossible positions are refused when they are built (``scenario``, ``deal``) or loaded
(``GameState.from_json``), with an ``UnoError`` naming the problem, and every state the engine
writes loads again."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from games.uno import (
    GameState,
    Options,
    UnoError,
    all_legal_moves,
    apply,
    deal,
    new_game,
    random_move,
    scenario,
)

from .conftest import DRAW, play

HANDS = [["R5", "G1"], ["B1", "B2"]]
DECK = ["Y5", "Y6", "Y7"]


# --- scenario and deal ----------------------------------------------------------------------------


def test_a_scenario_with_the_turn_out_of_range_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UnoError, match="turn 5 is not a seat of this 2-player game"):
        scenario(hands=HANDS, top="R3", deck=DECK, turn=5)
    with pytest.raises(UnoError, match="turn -1 is not a seat"):
        scenario(hands=HANDS, top="R3", deck=DECK, turn=-1)


def test_a_scenario_with_a_direction_other_than_plus_or_minus_one_is_refused() -> None:
    with pytest.raises(UnoError, match=r"direction 0: it must be 1 .* or -1"):
        scenario(hands=HANDS, top="R3", deck=DECK, direction=0)
    with pytest.raises(UnoError, match="direction 2"):
        scenario(hands=HANDS, top="R3", deck=DECK, direction=2)


def test_a_scenario_with_an_unknown_colour_is_refused_naming_the_colours() -> None:
    with pytest.raises(UnoError, match="colour 'purple' is not one of red, yellow, green, blue"):
        scenario(hands=HANDS, top="W", deck=DECK, color="purple")


def test_a_scenario_needs_one_score_per_seat_none_negative() -> None:
    with pytest.raises(UnoError, match="1 scores for 2 players"):
        scenario(hands=HANDS, top="R3", deck=DECK, scores=[5])
    with pytest.raises(UnoError, match=r"scores \[-5, 0\]"):
        scenario(hands=HANDS, top="R3", deck=DECK, scores=[-5, 0])
    with pytest.raises(UnoError, match="1 scores for 2 players"):
        deal(hands=HANDS, top="R3", deck=DECK, scores=[5])


def test_a_scenario_with_the_dealer_out_of_range_is_refused() -> None:
    with pytest.raises(UnoError, match="dealer 7 is not a seat of this 2-player game"):
        scenario(hands=HANDS, top="R3", deck=DECK, dealer=7)


@pytest.mark.parametrize("card", ["WS", "WC"])
def test_a_2018_card_without_the_2018_deck_is_refused_even_with_an_explicit_deck(
    card: str,
) -> None:
    with pytest.raises(UnoError, match=f"{card} .* only in the 2018 deck, and deck_2018 is off"):
        scenario(hands=[["R5", card], ["B1"]], top="R3", deck=DECK)
    with pytest.raises(UnoError, match=f"{card} .* only in the 2018 deck"):
        scenario(hands=HANDS, top="R3", deck=[card, "Y1"])
    with pytest.raises(UnoError, match=f"{card} .* only in the 2018 deck"):
        deal(hands=HANDS, top=card, deck=DECK)
    state = scenario({"deck_2018": True}, hands=[["R5", card], ["B1"]], top="R3", deck=DECK)
    assert state.hand(0) == ["R5", card]


def test_more_copies_of_a_card_than_the_deck_has_are_refused_with_an_explicit_deck() -> None:
    with pytest.raises(UnoError, match="5 copies of W4: the deck has 4"):
        scenario(hands=[["W4"] * 5, ["B1"]], top="R3", deck=DECK)
    with pytest.raises(UnoError, match="3 copies of Y5: the deck has 2"):
        scenario(hands=[["Y5", "R1"], ["Y5"]], top="R3", deck=DECK)
    with pytest.raises(UnoError, match="2 copies of R0: the deck has 1"):
        scenario(hands=[["R0"], ["B1"]], top="R3", discard=["R0"], deck=DECK)


def test_more_copies_than_the_deck_has_are_refused_naming_the_card_without_a_deck() -> None:
    with pytest.raises(UnoError, match="5 copies of W4: the deck has 4"):
        scenario(hands=[["W4"] * 5, ["B1"]], top="R3")


def test_a_scenario_with_a_short_explicit_deck_reloads_and_plays_on() -> None:
    state = scenario(hands=HANDS, top="R3", deck=DECK)
    data = json.loads(json.dumps(state.to_json()))
    assert data["out_of_play"] == 108 - 4 - 1 - 3
    loaded = GameState.from_json(data)
    assert loaded.to_json() == state.to_json()
    apply(loaded, 0, play("R5", uno=True))
    apply(loaded, 1, DRAW)
    assert loaded.phase_name == "drawn"
    assert GameState.from_json(loaded.to_json()).to_json() == loaded.to_json()
    # The next hand is dealt from the whole deck: nothing is out of play any more.
    whole = scenario(hands=[["R5"], ["B1"]], top="R3", deck=DECK)
    apply(whole, 0, play("R5"))
    assert whole.hand_number == 2 and "out_of_play" not in whole.to_json()
    assert GameState.from_json(whole.to_json()).to_json() == whole.to_json()


# --- GameState.from_json: what each phase needs, and the cards ------------------------------------


def _drawn_state() -> dict[str, Any]:
    state = new_game(Options(players=2), 3)
    apply(state, state.turn, DRAW)
    assert state.phase_name == "drawn"
    return json.loads(json.dumps(state.to_json()))


def _challenge_state() -> dict[str, Any]:
    state = scenario(hands=[["W4", "R1", "G1"], ["B1", "B5"], ["B3", "G9"]], top="R3")
    apply(state, 0, play("W4", color="blue"))
    assert state.phase_name == "challenge"
    return json.loads(json.dumps(state.to_json()))


def test_a_stored_drawn_phase_without_a_drawn_card_is_refused() -> None:
    data = _drawn_state()
    GameState.from_json(data)
    with pytest.raises(UnoError, match=r"phase drawn: seat . on turn does not hold a drawn card"):
        GameState.from_json({**data, "drawn": None})


def test_a_stored_drawn_card_the_seat_on_turn_does_not_hold_is_refused() -> None:
    data = _drawn_state()
    held = set(data["hands"][data["turn"]])
    other = next(c for c in data["deck"] if c not in held)
    with pytest.raises(UnoError, match=r"phase drawn: seat . on turn does not hold a drawn card"):
        GameState.from_json({**data, "drawn": other})


def test_a_stored_challenge_phase_without_a_pending_wild_draw_four_is_refused() -> None:
    data = json.loads(json.dumps(new_game(Options(players=3), 5).to_json()))
    with pytest.raises(UnoError, match=r"phase challenge: no Wild Draw Four .* is pending"):
        GameState.from_json({**data, "phase": "challenge"})
    pending = _challenge_state()
    GameState.from_json(pending)
    with pytest.raises(UnoError, match="phase challenge: no Wild Draw Four"):
        GameState.from_json({**pending, "penalty": 0})
    with pytest.raises(UnoError, match="phase challenge: no Wild Draw Four"):
        GameState.from_json({**pending, "w4_player": pending["turn"]})


def test_a_stored_stack_phase_without_a_pending_draw_two_is_refused() -> None:
    data = json.loads(json.dumps(new_game(Options(players=3, stacking=True), 5).to_json()))
    with pytest.raises(UnoError, match="phase stack: no Draw Two penalty"):
        GameState.from_json({**data, "phase": "stack", "penalty": 2})


def test_a_stored_challenge_reveal_must_be_consistent() -> None:
    data = _challenge_state()
    good = {"seat": 1, "player": 0, "hand": ["R1", "G1"]}
    GameState.from_json({**data, "challenge_reveal": good})
    for bad in ({**good, "player": 1}, {**good, "hand": []}, {**good, "player": 3}):
        with pytest.raises(UnoError, match="challenge reveal"):
            GameState.from_json({**data, "challenge_reveal": bad})


def test_a_stored_state_must_hold_the_whole_deck_each_card_as_often_as_it_has_it() -> None:
    data = json.loads(json.dumps(new_game(Options(players=2), 4).to_json()))
    with pytest.raises(UnoError, match="107 cards in the hands, deck and discard pile"):
        GameState.from_json({**data, "deck": data["deck"][1:]})
    with pytest.raises(UnoError, match=r"WS .* only in the 2018 deck"):
        GameState.from_json({**data, "deck": [*data["deck"][1:], "WS"]})
    extra = next(c for c in data["deck"] if c != data["deck"][0] and c != "R0" and c[0] != "W")
    with pytest.raises(UnoError, match=f"3 copies of {extra}: the deck has 2"):
        GameState.from_json({**data, "deck": [*data["deck"][1:], extra]})
    with pytest.raises(UnoError, match="out of play"):
        GameState.from_json({**data, "out_of_play": 5})
    wide = json.loads(json.dumps(new_game(Options(players=2, deck_2018=True), 4).to_json()))
    assert len(GameState.from_json(wide).deck) == 112 - 14 - 1


def test_a_stored_negative_score_is_refused() -> None:
    data = json.loads(json.dumps(new_game(Options(players=2), 4).to_json()))
    with pytest.raises(UnoError, match="corrupt game state: scores"):
        GameState.from_json({**data, "scores": [0, -20]})


# --- every state the engine writes loads ---------------------------------------------------------

# The option sets the engine, bot and game tests play, and every option at once.
TABLES = [
    Options(players=2),
    Options(players=2, single_hand=True),
    Options(players=3, target_score=200),
    Options(players=3, single_hand=True, stacking=True, jump_in=True, seven_o=True),
    Options(players=4, single_hand=True, draw_until_playable=True, deck_2018=True),
    Options(players=4, stacking=True, jump_in=True, target_score=150),
    Options(players=5, single_hand=True, deck_2018=True, start_2022=True, seven_o=True),
    Options(players=2, stacking=True, seven_o=True, deck_2018=True, target_score=100),
    Options(
        players=10, stacking=True, seven_o=True, jump_in=True, draw_until_playable=True,
        deck_2018=True, start_2022=True, single_hand=True,
    ),
]
NEWER_KEYS = ("w4_hand", "challenge_reveal", "out_of_play")


@pytest.mark.parametrize("options", TABLES, ids=[f"table{i}" for i in range(len(TABLES))])
def test_every_state_of_many_random_games_round_trips_through_json(options: Options) -> None:
    rng = random.Random(options.players)
    phases: set[str] = set()
    for seed in range(8):
        state = new_game(options, seed)
        moves = 0
        while not state.finished and moves < 3000:
            askable = all_legal_moves(state)
            seat = state.awaiting if rng.random() < 0.9 else rng.choice(sorted(askable))
            assert seat is not None
            apply(state, seat, random_move(askable[seat], rng))
            moves += 1
            data = json.loads(json.dumps(state.to_json()))
            assert "out_of_play" not in data  # a dealt game has every card in play
            loaded = GameState.from_json(data)
            assert loaded.to_json() == data
            # As stored before the newer keys existed, it loads too.
            GameState.from_json({k: v for k, v in data.items() if k not in NEWER_KEYS})
            phases.add(loaded.phase_name)
            state = loaded  # play on from the loaded state, as the server does
    assert {"play", "drawn"} <= phases
