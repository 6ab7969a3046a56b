"""Calling Uno and being caught: the window is move-based, never wall-clock based."""

from __future__ import annotations

import pytest

from games.uno import IllegalMove, Options, apply, legal_moves, view
from games.uno.scenario import scenario

from .conftest import DRAW, UNO, catch, play

DECK = ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6"]


def three_seats() -> object:
    return scenario(
        Options(players=3), hands=[["R1", "G7"], ["B1", "B2"], ["B3", "B4"]], top="R3", deck=DECK
    )


def test_uno_call_is_part_of_the_penultimate_play() -> None:
    state = three_seats()
    moves = legal_moves(state, 0)
    assert play("R1", uno=True) in moves and play("R1") in moves
    apply(state, 0, play("R1", uno=True))
    assert state.uno_seat == -1
    assert not [m for m in legal_moves(state, 2) if m.type == "catch"]


def test_uno_call_only_allowed_with_penultimate_card() -> None:
    state = scenario(hands=[["R1", "G7", "G8"], ["B1"]], top="R3", deck=DECK)
    with pytest.raises(IllegalMove, match="penultimate"):
        apply(state, 0, play("R1", uno=True))


def test_missed_uno_caught_before_next_player_acts_draws_two() -> None:
    state = three_seats()
    apply(state, 0, play("R1"))
    assert catch(0) in legal_moves(state, 2)  # any opponent, not only the next player
    assert view(state, 2)["uno_window"] == 0
    apply(state, 2, catch(0))
    assert len(state.hands[0]) == 3
    assert state.turn == 1  # catching is not a turn
    assert catch(0) not in legal_moves(state, 1)


def test_missed_uno_window_closes_when_next_player_acts() -> None:
    state = three_seats()
    apply(state, 0, play("R1"))
    apply(state, 1, DRAW)
    assert catch(0) not in legal_moves(state, 2)
    with pytest.raises(IllegalMove, match="nobody can be caught"):
        apply(state, 2, catch(0))


def test_late_uno_call_closes_the_window_without_penalty() -> None:
    state = three_seats()
    apply(state, 0, play("R1"))
    assert UNO in legal_moves(state, 0)
    apply(state, 0, UNO)
    assert len(state.hands[0]) == 1 and catch(0) not in legal_moves(state, 1)


def test_cannot_catch_yourself_or_a_player_who_called_uno() -> None:
    state = three_seats()
    apply(state, 0, play("R1"))
    with pytest.raises(IllegalMove, match="cannot catch yourself"):
        apply(state, 0, catch(0))
    with pytest.raises(IllegalMove, match="cannot be caught"):
        apply(state, 2, catch(1))


def test_next_player_may_catch_before_taking_their_turn() -> None:
    state = three_seats()
    apply(state, 0, play("R1"))
    apply(state, 1, catch(0))
    assert state.turn == 1 and len(state.hands[0]) == 3
    apply(state, 1, DRAW)


def test_uno_window_stays_open_across_automatic_draw_two_penalty() -> None:
    state = scenario(
        Options(players=3), hands=[["RD", "G7"], ["B1", "B2"], ["B3", "B4"]], top="R3", deck=DECK
    )
    apply(state, 0, play("RD"))
    assert state.turn == 2 and catch(0) in legal_moves(state, 1)


def test_no_catch_window_when_a_swap_leaves_more_than_one_card() -> None:
    opts = Options(players=2, seven_o=True)
    state = scenario(opts, hands=[["R7", "G7"], ["B1", "B2", "B3"]], top="R3", deck=DECK)
    apply(state, 0, play("R7", target=1))
    assert len(state.hands[0]) == 3 and state.uno_seat == -1
