"""Wild Draw Four: the colour restriction, the challenge and its outcomes."""

from __future__ import annotations

import pytest

from games.uno import IllegalMove, apply, legal_moves
from games.uno.scenario import scenario
from games.uno.state import CHALLENGE as CHALLENGE_PHASE

from .conftest import ACCEPT, CHALLENGE, DRAW, play

DECK = ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7", "Y8"]


def test_wild_draw_four_opens_challenge_window_for_next_player_only() -> None:
    state = scenario(hands=[["W4", "G1", "G2"], ["B1"], ["B2"]], top="R3", deck=DECK)
    apply(state, 0, play("W4", color="blue"))
    assert state.phase == CHALLENGE_PHASE and state.awaiting == 1
    assert legal_moves(state, 1) == [CHALLENGE, ACCEPT]
    assert legal_moves(state, 2) == []
    with pytest.raises(IllegalMove):
        apply(state, 2, CHALLENGE)


def test_wild_draw_four_accepted_next_player_draws_four_and_misses_turn() -> None:
    state = scenario(hands=[["W4", "G1"], ["B1"], ["B2"]], top="R3", deck=DECK)
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, ACCEPT)
    assert len(state.hands[1]) == 5 and state.turn == 2 and state.color == 3


def test_wild_draw_four_challenge_succeeds_when_player_held_current_colour() -> None:
    state = scenario(hands=[["W4", "R1", "G1"], ["B1"], ["B2"]], top="R3", deck=DECK)
    apply(state, 0, play("W4", color="blue"))  # illegal: holds R1, but nobody checks yet
    apply(state, 1, CHALLENGE)
    assert len(state.hands[0]) == 6  # two left + 4 penalty
    assert len(state.hands[1]) == 1
    assert state.turn == 1 and state.color == 3  # challenger takes the turn; colour stands
    assert DRAW in legal_moves(state, 1)


def test_wild_draw_four_challenge_fails_challenger_draws_six_and_misses_turn() -> None:
    state = scenario(hands=[["W4", "G1", "Y5"], ["B1"], ["B2"]], top="R5", deck=DECK)
    apply(state, 0, play("W4", color="green"))
    apply(state, 1, CHALLENGE)
    assert len(state.hands[1]) == 7 and len(state.hands[0]) == 2
    assert state.turn == 2 and state.color == 2


def test_wild_draw_four_legal_when_holding_same_number_in_other_colour() -> None:
    state = scenario(hands=[["W4", "G5", "W"], ["B1"], ["B2"]], top="R5", deck=DECK)
    apply(state, 0, play("W4", color="green"))
    apply(state, 1, CHALLENGE)
    assert len(state.hands[1]) == 7  # G5 and W do not count as the current colour


def test_illegal_wild_draw_four_that_nobody_challenges_stands() -> None:
    state = scenario(hands=[["W4", "R1", "G1"], ["B1"], ["B2"]], top="R3", deck=DECK)
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, ACCEPT)
    assert len(state.hands[0]) == 2 and len(state.hands[1]) == 5 and state.color == 3


def test_wild_draw_four_after_wild_uses_declared_colour_for_challenge() -> None:
    state = scenario(hands=[["W4", "R1"], ["B1"], ["B2"]], top="W", color="green", deck=DECK)
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, CHALLENGE)  # R1 is not green: the play was legal
    assert len(state.hands[1]) == 7


def test_challenge_is_only_possible_right_after_a_wild_draw_four() -> None:
    state = scenario(hands=[["R1", "G1"], ["B1"]], top="R3", deck=DECK)
    with pytest.raises(IllegalMove, match="nothing to challenge"):
        apply(state, 0, CHALLENGE)
