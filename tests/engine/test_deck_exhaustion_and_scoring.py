"""Running out of cards, going out, scoring, matches and the turn cap."""

from __future__ import annotations

import pytest

from games.uno import Options, apply, engine, legal_moves, new_game
from games.uno.cards import CODES
from games.uno.scenario import scenario

from .conftest import ACCEPT, DRAW, play


def test_deck_runs_out_top_discard_stays_rest_reshuffled_into_new_deck() -> None:
    state = scenario(hands=[["G1", "G2"], ["B1"]], top="R3", discard=["R5", "Y5", "Y9"], deck=[])
    apply(state, 0, DRAW)
    assert [CODES[c] for c in state.discard] == ["R3"]
    assert len(state.deck) + len(state.hands[0]) == 2 + 3 + 0 or len(state.hands[0]) == 3
    assert sorted(CODES[c] for c in state.deck + state.hands[0][2:]) == ["R5", "Y5", "Y9"]


def test_draw_is_a_pass_when_deck_and_discard_are_exhausted() -> None:
    state = scenario(hands=[["G1", "G2"], ["B1"]], top="R3", deck=[])
    assert DRAW in legal_moves(state, 0)
    apply(state, 0, DRAW)
    assert len(state.hands[0]) == 2 and state.turn == 1


def test_penalty_draws_only_what_is_left_when_everything_is_exhausted() -> None:
    state = scenario(hands=[["RD", "G2", "G3"], ["B1"]], top="R3", deck=[])
    apply(state, 0, play("RD"))
    assert len(state.hands[1]) == 2  # only R3 (under the top) could be drawn
    assert state.turn == 0


def test_going_out_ends_the_hand_and_scores_opponents_cards() -> None:
    opts = Options(players=3)
    state = scenario(
        opts, hands=[["R1"], ["B9", "GS", "W"], ["W4", "Y0", "B5"]], top="R3", deck=["Y1"]
    )
    apply(state, 0, play("R1"))
    assert state.last_hand is not None
    assert state.last_hand["winner"] == 0 and state.last_hand["points"] == 9 + 20 + 50 + 50 + 0 + 5
    assert state.scores == [134, 0, 0]
    assert state.hand_number == 2 and not state.finished  # next hand dealt automatically


def test_going_out_with_draw_two_next_player_draws_first_and_is_scored() -> None:
    opts = Options(players=2)
    state = scenario(opts, hands=[["RD"], ["B9"]], top="R3", deck=["Y1", "Y2"])
    apply(state, 0, play("RD"))
    assert state.last_hand is not None and state.last_hand["points"] == 9 + 1 + 2


def test_going_out_with_wild_draw_four_next_player_draws_four_first() -> None:
    opts = Options(players=2)
    state = scenario(opts, hands=[["W4"], ["B9"]], top="R3", deck=["Y1", "Y2", "Y3", "Y4"])
    apply(state, 0, play("W4", color="red"))
    assert state.last_hand is not None and state.last_hand["points"] == 9 + 1 + 2 + 3 + 4


def test_wild_shuffle_hands_and_custom_wild_score_40() -> None:
    opts = Options(players=2, deck_2018=True)
    state = scenario(opts, hands=[["R1"], ["WS", "WC", "W"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R1"))
    assert state.last_hand is not None and state.last_hand["points"] == 40 + 40 + 50


@pytest.mark.parametrize("single_hand", [False, True])
def test_2022_rules_score_every_wild_50_whatever_its_type(single_hand: bool) -> None:
    # "If played for points, each Wild card is worth 50 points regardless of type" (2022).
    opts = Options(players=2, deck_2018=True, start_2022=True, single_hand=single_hand)
    state = scenario(opts, hands=[["R1"], ["WS", "WC", "W", "W4"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R1"))
    assert state.last_hand is not None
    assert state.last_hand["points"] == 4 * 50
    assert state.last_hand["hand_points"] == [0, 200]
    assert state.scores[0] == 200


def test_match_ends_when_a_player_reaches_target_score() -> None:
    opts = Options(players=2, target_score=100)
    state = scenario(opts, hands=[["R1"], ["W", "W4"]], top="R3", deck=["Y1"], scores=[10, 90])
    apply(state, 0, play("R1"))
    assert state.finished and state.winner == 0 and state.awaiting is None
    assert legal_moves(state, 0) == [] and legal_moves(state, 1) == []


def test_match_default_target_is_500_and_continues_below_it() -> None:
    assert Options().target_score == 500
    state = scenario(hands=[["R1"], ["B9"]], top="R3", deck=["Y1"], scores=[400, 0])
    apply(state, 0, play("R1"))
    assert not state.finished and state.scores == [409, 0]


def test_single_hand_option_ends_match_after_first_hand() -> None:
    opts = Options(players=2, single_hand=True)
    state = scenario(opts, hands=[["R1"], ["B9"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R1"))
    assert state.finished and state.winner == 0 and state.scores == [9, 0]


def test_new_hand_deal_passes_to_the_left() -> None:
    state = new_game(Options(players=4), seed=5)
    dealer = state.dealer
    hand = state.hand_number
    while state.hand_number == hand:
        seat = state.awaiting
        assert seat is not None
        moves = legal_moves(state, seat)
        plays = [m for m in moves if m.type == "play"]
        apply(state, seat, (plays or moves)[0])
    assert state.dealer == (dealer + 1) % 4
    assert state.last_hand is not None and state.last_hand["hand_number"] == hand


def test_turn_cap_ends_hand_with_no_winner_and_no_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "HAND_MOVE_CAP", 3)
    opts = Options(players=2, single_hand=True)
    state = scenario(opts, hands=[["G1", "G2"], ["B1", "B2"]], top="R3", deck=[])
    for seat in (0, 1, 0):
        apply(state, seat, DRAW)  # both exhausted: every draw is a pass
    assert state.finished and state.winner is None
    assert state.last_hand is not None and state.last_hand["reason"] == "turn_cap"


def test_turn_cap_in_a_match_deals_the_next_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "HAND_MOVE_CAP", 2)
    state = scenario(hands=[["G1", "G2"], ["B1", "B2"]], top="R3", deck=[])
    apply(state, 0, DRAW)
    apply(state, 1, DRAW)
    assert state.hand_number == 2 and state.scores == [0, 0] and not state.finished


def test_match_hand_limit_gives_the_match_to_the_leader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MAX_HANDS", 1)
    state = scenario(hands=[["R1"], ["B9"]], top="R3", deck=["Y1"], scores=[0, 30])
    apply(state, 0, play("R1"))
    assert state.finished and state.winner == 1


def test_accept_is_not_available_without_pending_penalty() -> None:
    state = scenario(hands=[["R1", "G1"], ["B9"]], top="R3", deck=["Y1"])
    assert ACCEPT not in legal_moves(state, 0)
