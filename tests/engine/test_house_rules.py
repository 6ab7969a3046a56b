"""Options: stacking, Seven-O, Jump-In, draw until playable (2018 deck / 2022 start elsewhere)."""

from __future__ import annotations

import pytest

from games.uno import IllegalMove, Options, UnoError, apply, legal_moves
from games.uno.cards import CODES
from games.uno.scenario import scenario
from games.uno.state import CHALLENGE as CHALLENGE_PHASE
from games.uno.state import DRAWN, STACK

from .conftest import ACCEPT, CHALLENGE, DRAW, KEEP, play

DECK = [f"Y{i}" for i in range(1, 10)] + [f"G{i}" for i in range(1, 10)]


def hand_codes(state: object, seat: int) -> list[str]:
    return [CODES[c] for c in state.hands[seat]]  # type: ignore[attr-defined]


def test_stacking_draw_two_on_draw_two_passes_accumulated_penalty() -> None:
    opts = Options(players=3, stacking=True)
    state = scenario(
        opts, hands=[["RD", "G1", "G2"], ["BD", "B1"], ["B2", "B3"]], top="R3", deck=DECK
    )
    apply(state, 0, play("RD"))
    assert state.phase == STACK and state.awaiting == 1
    assert set(legal_moves(state, 1)) == {ACCEPT, play("BD"), play("BD", uno=True)}
    apply(state, 1, play("BD", uno=True))
    assert state.penalty == 4 and state.awaiting == 2
    apply(state, 2, ACCEPT)
    assert len(state.hands[2]) == 6 and state.turn == 0


def test_stacking_never_mixes_draw_two_and_wild_draw_four() -> None:
    opts = Options(players=3, stacking=True)
    state = scenario(
        opts, hands=[["RD", "G1", "G2"], ["W4", "R1", "B1"], ["B2"]], top="R3", deck=DECK
    )
    apply(state, 0, play("RD"))
    assert legal_moves(state, 1) == [ACCEPT]
    state = scenario(
        opts, hands=[["W4", "G1", "G2"], ["BD", "W4", "B1"], ["B2"]], top="R3", deck=DECK
    )
    apply(state, 0, play("W4", color="blue"))
    moves = legal_moves(state, 1)
    assert play("BD") not in moves and play("W4", color="red") in moves


def test_stacking_wild_draw_four_on_wild_draw_four_next_player_draws_eight() -> None:
    opts = Options(players=3, stacking=True)
    state = scenario(
        opts, hands=[["W4", "G1", "G2"], ["W4", "R1", "B1"], ["B2"]], top="R3", deck=DECK
    )
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, play("W4", color="green"))
    assert state.phase == CHALLENGE_PHASE and state.penalty == 8 and state.awaiting == 2
    apply(state, 2, ACCEPT)
    assert len(state.hands[2]) == 9


def test_stacking_successful_challenge_clears_the_whole_stack() -> None:
    opts = Options(players=3, stacking=True)
    state = scenario(
        opts, hands=[["W4", "G1", "G2"], ["W4", "B1", "B9"], ["B2"]], top="R3", deck=DECK
    )
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, play("W4", color="green"))  # held blue: illegal
    apply(state, 2, CHALLENGE)
    assert len(state.hands[1]) == 6 and len(state.hands[2]) == 1 and state.turn == 2


def test_stacking_failed_challenge_draws_stack_plus_two() -> None:
    opts = Options(players=3, stacking=True)
    state = scenario(
        opts, hands=[["W4", "G1", "G2"], ["W4", "R1", "Y1"], ["B2"]], top="R3", deck=DECK
    )
    apply(state, 0, play("W4", color="blue"))
    apply(state, 1, play("W4", color="green"))
    apply(state, 2, CHALLENGE)
    assert len(state.hands[2]) == 11 and state.turn == 0


def test_stacking_off_by_default_draw_two_is_automatic() -> None:
    state = scenario(Options(players=3), hands=[["RD", "G1"], ["BD"], ["B2"]], top="R3", deck=DECK)
    apply(state, 0, play("RD"))
    assert state.turn == 2 and len(state.hands[1]) == 3


def test_seven_o_seven_swaps_hands_with_chosen_player() -> None:
    opts = Options(players=3, seven_o=True)
    state = scenario(
        opts, hands=[["R7", "G1", "G2"], ["B1"], ["B2", "B3", "B4", "B5"]], top="R3", deck=DECK
    )
    moves = [m for m in legal_moves(state, 0) if m.card == "R7"]
    assert {m.target for m in moves} == {1, 2}
    apply(state, 0, play("R7", target=2))
    assert hand_codes(state, 0) == ["B2", "B3", "B4", "B5"]
    assert hand_codes(state, 2) == ["G1", "G2"] and state.turn == 1


def test_seven_o_seven_needs_a_target() -> None:
    opts = Options(players=3, seven_o=True)
    state = scenario(opts, hands=[["R7", "G1", "G2"], ["B1"], ["B2"]], top="R3", deck=DECK)
    with pytest.raises(IllegalMove, match="swap"):
        apply(state, 0, play("R7"))
    with pytest.raises(IllegalMove, match="swap"):
        apply(state, 0, play("R7", target=0))


def test_seven_o_zero_passes_all_hands_in_direction_of_play() -> None:
    opts = Options(players=3, seven_o=True)
    state = scenario(opts, hands=[["R0", "G1"], ["B1"], ["B2", "B3"]], top="R3", deck=DECK)
    apply(state, 0, play("R0"))
    assert hand_codes(state, 1) == ["G1"] and hand_codes(state, 2) == ["B1"]
    assert hand_codes(state, 0) == ["B2", "B3"]


def test_seven_o_going_out_on_a_seven_does_not_swap() -> None:
    opts = Options(players=2, seven_o=True, single_hand=True)
    state = scenario(opts, hands=[["R7"], ["B1"]], top="R3", deck=DECK)
    assert legal_moves(state, 0)[0] == play("R7")
    apply(state, 0, play("R7"))
    assert state.finished and state.winner == 0


def test_seven_o_off_by_default_seven_takes_no_target() -> None:
    state = scenario(hands=[["R7", "G1"], ["B1"]], top="R3", deck=DECK)
    with pytest.raises(IllegalMove, match="target"):
        apply(state, 0, play("R7", target=1))


def test_jump_in_identical_card_out_of_turn_takes_the_turn() -> None:
    opts = Options(players=4, jump_in=True)
    state = scenario(opts, hands=[["G1", "G2"], ["B1"], ["R3", "B5"], ["B2"]], top="R3", deck=DECK)
    assert play("R3") in legal_moves(state, 2)
    apply(state, 2, play("R3", uno=True))
    assert state.turn == 3  # play continues from the jumper


def test_jump_in_requires_exact_colour_and_number() -> None:
    opts = Options(players=3, jump_in=True)
    state = scenario(opts, hands=[["G1", "G2"], ["G3", "R1"], ["B2"]], top="R3", deck=DECK)
    assert legal_moves(state, 1) == []
    with pytest.raises(IllegalMove, match="jump in"):
        apply(state, 1, play("G3"))


def test_jump_in_off_by_default() -> None:
    state = scenario(Options(players=3), hands=[["G1"], ["B1"], ["R3", "B5"]], top="R3", deck=DECK)
    assert legal_moves(state, 2) == []


def test_jump_in_with_skip_skips_the_player_after_the_jumper() -> None:
    opts = Options(players=4, jump_in=True)
    state = scenario(opts, hands=[["G1"], ["B1"], ["RS", "B5", "B6"], ["B2"]], top="RS", deck=DECK)
    apply(state, 2, play("RS"))
    assert state.turn == 0


def test_draw_until_playable_keeps_drawing_until_a_playable_card() -> None:
    opts = Options(players=2, draw_until_playable=True)
    state = scenario(opts, hands=[["G1"], ["B1"]], top="R3", deck=["Y1", "B2", "R9", "Y5"])
    apply(state, 0, DRAW)
    assert hand_codes(state, 0) == ["G1", "Y1", "B2", "R9"] and state.phase == DRAWN
    apply(state, 0, play("R9"))
    assert state.turn == 1


def test_draw_until_playable_passes_when_cards_run_out() -> None:
    opts = Options(players=2, draw_until_playable=True)
    state = scenario(opts, hands=[["G1"], ["B1"]], top="R3", deck=["Y1", "B2"])
    apply(state, 0, DRAW)
    assert len(state.hands[0]) == 3 and state.turn == 1


def test_draw_until_playable_off_by_default_draws_one() -> None:
    state = scenario(hands=[["G1"], ["B1"]], top="R3", deck=["Y1", "B2", "R9"])
    apply(state, 0, DRAW)  # one unplayable card, then the drawer keeps it
    assert len(state.hands[0]) == 2 and state.turn == 0 and legal_moves(state, 0) == [KEEP]


def test_wild_shuffle_hands_only_in_2018_deck() -> None:
    with pytest.raises(UnoError, match=r"WS .* only in the 2018 deck"):
        scenario(Options(players=2), hands=[["WS"], ["B1"]], top="R3")
    assert DRAW in legal_moves(
        scenario(Options(players=2, deck_2018=True), hands=[["WS"], ["B1"]], top="R3"), 0
    )
