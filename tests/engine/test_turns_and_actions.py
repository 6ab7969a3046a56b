"""A turn (match, wild, draw-then-play-or-keep) and the action cards."""

from __future__ import annotations

import pytest

from games.uno import IllegalMove, Options, apply, default_move, legal_moves
from games.uno.cards import CODES
from games.uno.scenario import scenario
from games.uno.state import DRAWN, PLAY

from .conftest import DRAW, KEEP, play


def codes(cards: list[int]) -> list[str]:
    return [CODES[c] for c in cards]


def test_play_card_matching_colour() -> None:
    state = scenario(hands=[["R9", "G1"], ["B1"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R9"))
    assert codes(state.discard)[-1] == "R9" and state.turn == 1


def test_play_card_matching_number() -> None:
    state = scenario(hands=[["G3", "G1"], ["B1"]], top="R3", deck=["Y1"])
    apply(state, 0, play("G3"))
    assert state.color == 2 and state.turn == 1


def test_play_card_matching_symbol() -> None:
    state = scenario(hands=[["GS", "G1"], ["B1"], ["B2"]], top="RS", deck=["Y1"])
    apply(state, 0, play("GS"))
    assert state.turn == 2


def test_non_matching_card_is_illegal_and_state_unchanged() -> None:
    state = scenario(hands=[["G4", "G1"], ["B1"]], top="R3", deck=["Y1"])
    before = state.to_json()
    with pytest.raises(IllegalMove, match="matches neither"):
        apply(state, 0, play("G4"))
    assert state.to_json() == before


def test_card_not_in_hand_is_illegal() -> None:
    state = scenario(hands=[["G4", "G1"], ["B1"]], top="R3", deck=["Y1"])
    with pytest.raises(IllegalMove, match="do not hold"):
        apply(state, 0, play("R5"))


def test_playing_out_of_turn_is_illegal() -> None:
    state = scenario(hands=[["R4", "G1"], ["R1", "B1"]], top="R3", deck=["Y1"])
    with pytest.raises(IllegalMove, match="not your turn"):
        apply(state, 1, play("R1"))


def test_wild_may_be_played_any_time_even_holding_matching_colour() -> None:
    state = scenario(hands=[["W", "R1"], ["B1"]], top="R3", deck=["Y1"])
    assert play("W", color="blue") in legal_moves(state, 0)
    apply(state, 0, play("W", color="blue"))
    assert state.color == 3 and state.turn == 1


def test_wild_colour_choice_may_repeat_current_colour() -> None:
    state = scenario(hands=[["W", "R1"], ["B1"]], top="R3", deck=["Y1"])
    apply(state, 0, play("W", color="red"))
    assert state.color == 0


def test_every_wild_play_names_a_colour() -> None:
    state = scenario(hands=[["W", "W4", "R1"], ["B1"]], top="G3", deck=["Y1"])
    wilds = [m for m in legal_moves(state, 0) if m.card in ("W", "W4")]
    assert len(wilds) == 8 and all(m.color for m in wilds)


def test_draw_then_play_the_drawn_card_if_playable() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["R7", "Y1"])
    apply(state, 0, DRAW)
    assert state.phase == DRAWN and state.turn == 0
    assert legal_moves(state, 0) == [play("R7"), KEEP]
    apply(state, 0, play("R7"))
    assert state.turn == 1 and codes(state.hands[0]) == ["G1", "B2"]


def test_draw_then_keep_the_drawn_card() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["R7", "Y1"])
    apply(state, 0, DRAW)
    apply(state, 0, KEEP)
    assert state.turn == 1 and codes(state.hands[0]) == ["G1", "B2", "R7"]


def test_after_drawing_no_other_card_may_be_played() -> None:
    state = scenario(hands=[["R1", "B2"], ["B1"]], top="R3", deck=["R7", "Y1"])
    apply(state, 0, DRAW)
    with pytest.raises(IllegalMove, match="only play the card you drew"):
        apply(state, 0, play("R1"))


def test_an_unplayable_drawn_card_waits_for_keep_like_a_playable_one() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["Y7", "Y1"])
    apply(state, 0, DRAW)
    assert state.turn == 0 and state.phase == DRAWN and "Y7" in codes(state.hands[0])
    assert legal_moves(state, 0) == [KEEP]  # the drawer may only keep it
    assert legal_moves(state, 1) == []
    apply(state, 0, KEEP)
    assert state.turn == 1 and state.phase == PLAY and "Y7" in codes(state.hands[0])


def test_an_unplayable_drawn_card_cannot_be_played() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["Y7", "Y1"])
    apply(state, 0, DRAW)
    before = state.to_json()
    with pytest.raises(IllegalMove, match="matches neither"):
        apply(state, 0, play("Y7"))
    with pytest.raises(IllegalMove, match="only play the card you drew"):
        apply(state, 0, play("G1"))
    assert state.to_json() == before


def test_the_default_move_after_an_unplayable_draw_is_keep() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=["Y7", "Y1"])
    apply(state, 0, default_move(state, 0))
    assert state.phase == DRAWN
    apply(state, 0, default_move(state, 0))
    assert state.turn == 1 and state.phase == PLAY


def test_a_draw_from_an_exhausted_deck_passes_the_turn_at_once() -> None:
    state = scenario(hands=[["G1", "B2"], ["B1"]], top="R3", deck=[])
    apply(state, 0, DRAW)
    assert state.turn == 1 and state.phase == PLAY and len(state.hands[0]) == 2


def test_may_draw_even_holding_a_playable_card() -> None:
    state = scenario(hands=[["R1", "B2"], ["B1"]], top="R3", deck=["Y7"])
    assert DRAW in legal_moves(state, 0)


def test_skip_next_player_misses_turn() -> None:
    state = scenario(hands=[["RS", "G1"], ["B1"], ["B2"]], top="R3", deck=["Y1"])
    apply(state, 0, play("RS"))
    assert state.turn == 2


def test_reverse_switches_direction() -> None:
    state = scenario(hands=[["RR", "G1"], ["B1"], ["B2"], ["B3"]], top="R3", deck=["Y1"])
    apply(state, 0, play("RR"))
    assert state.direction == -1 and state.turn == 3


def test_reverse_acts_as_skip_with_two_players() -> None:
    state = scenario(hands=[["RR", "G1"], ["B1"]], top="R3", deck=["Y1"])
    apply(state, 0, play("RR"))
    assert state.turn == 0 and state.direction == -1


def test_draw_two_next_player_draws_two_and_misses_turn() -> None:
    state = scenario(hands=[["RD", "G1"], ["B1"], ["B2"]], top="R3", deck=["Y1", "Y2", "Y3"])
    apply(state, 0, play("RD"))
    assert codes(state.hands[1]) == ["B1", "Y1", "Y2"] and state.turn == 2


def test_skip_counterclockwise() -> None:
    state = scenario(
        hands=[["RS", "G1"], ["B1"], ["B2"], ["B3"]], top="R3", deck=["Y1"], direction=-1
    )
    apply(state, 0, play("RS"))
    assert state.turn == 2


def test_draw_two_on_draw_two_without_stacking_is_an_ordinary_match() -> None:
    state = scenario(
        hands=[["RD", "G1"], ["GD", "B1"], ["B2"]], top="R3", deck=["Y1", "Y2", "Y3", "Y4"]
    )
    apply(state, 0, play("RD"))
    assert state.turn == 2  # seat 1 drew two automatically: nothing to stack


def test_wild_shuffle_hands_redeals_all_cards_from_players_left() -> None:
    opts = Options(players=3, deck_2018=True)
    state = scenario(
        opts, hands=[["WS", "R1", "R2"], ["B1", "B2", "B3", "B4"], ["G1"]], top="R3", deck=["Y1"]
    )
    apply(state, 0, play("WS", color="green"))
    sizes = [len(h) for h in state.hands]
    assert sum(sizes) == 7 and sizes == [2, 3, 2]  # 7 cards dealt from seat 1
    assert state.color == 2 and state.turn == 1


def test_wild_customizable_plays_as_plain_wild() -> None:
    opts = Options(players=2, deck_2018=True)
    state = scenario(opts, hands=[["WC", "R1"], ["B1"]], top="G3", deck=["Y1"])
    apply(state, 0, play("WC", color="yellow"))
    assert state.color == 1 and state.turn == 1
