"""The engine as a bot writer's library: scenario/deal, replaying JSON logs, every seat's moves,
state names that match the view, Wild Draw Four bluffs and the sensible random player."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import games.uno as uno
from games.uno import (
    HAND_MOVE_CAP,
    PHASES,
    Move,
    Options,
    UnoError,
    all_legal_moves,
    apply,
    deal,
    honest_moves,
    is_bluff,
    legal_moves,
    new_game,
    random_move,
    replay,
    scenario,
    view,
    view_bluffs,
)

from .conftest import play, random_game

# A draw pile no test here draws from to the end (each card as often as the deck has it).
YELLOWS = ["Y2", "Y2", "Y3", "Y3", "Y4", "Y4", "Y5", "Y5"]

# --- scenario and deal ------------------------------------------------------------------------


def test_scenario_is_exported_from_the_package() -> None:
    assert uno.scenario is scenario and "scenario" in uno.__all__ and "deal" in uno.__all__


def test_scenario_takes_options_as_a_dict_and_counts_players_from_the_hands() -> None:
    state = scenario({"stacking": True}, hands=[["R5"], ["G1"], ["B1"]], top="R3")
    assert state.options == Options(players=3, stacking=True)


def test_scenario_rejects_an_options_object_for_another_number_of_players_and_says_why() -> None:
    with pytest.raises(UnoError, match="as a dict"):
        scenario(Options(stacking=True), hands=[["R5"], ["G1"], ["B1"]], top="R3")


def test_scenario_rejects_an_unknown_option_name() -> None:
    with pytest.raises(uno.OptionsError):
        scenario({"stackin": True}, hands=[["R5"], ["G1"]], top="R3")


@pytest.mark.parametrize(
    ("top", "turn", "direction", "phase"),
    [
        ("R5", 0, 1, "play"),  # the seat left of the dealer (3) plays
        ("RS", 1, 1, "play"),  # ... misses its turn
        ("RR", 3, -1, "play"),  # the dealer plays, counterclockwise
        ("RD", 1, 1, "play"),  # seat 0 draws two and misses its turn
        ("W", 0, 1, "color"),  # seat 0 declares the colour first
    ],
)
def test_deal_applies_the_first_discards_effects(
    top: str, turn: int, direction: int, phase: str
) -> None:
    hands = [["G1"], ["G2"], ["G3"], ["G4"]]
    state = deal(hands=hands, top=top, deck=["Y1", "Y2", "Y3"])
    assert (state.dealer, state.turn, state.direction, state.phase_name) == (
        3, turn, direction, phase
    )
    assert state.hand(0) == (["G1", "Y1", "Y2"] if top == "RD" else ["G1"])
    assert state.color_name == (None if top == "W" else "red")


def test_deal_never_leaves_a_wild_draw_four_nor_under_2022_rules_an_action_card_on_top() -> None:
    with pytest.raises(UnoError, match="never left"):
        deal(hands=[["G1"], ["G2"]], top="W4")
    with pytest.raises(UnoError, match="never left"):
        deal({"start_2022": True}, hands=[["G1"], ["G2"]], top="RS")
    assert deal({"start_2022": True}, hands=[["G1"], ["G2"]], top="R0").turn == 0


@pytest.mark.parametrize("seed", range(60))
def test_deal_rebuilds_exactly_the_hand_a_real_deal_gave(seed: int) -> None:
    options = Options(players=3)
    real = new_game(options, seed)
    hands = [real.hand(s) for s in range(3)]
    deck = [uno.CARD_CODES[c] for c in reversed(real.deck)]  # next card first
    if real.top.endswith("D"):  # the first player drew the deck's top two cards
        first = (real.dealer + 1) % 3
        deck = hands[first][-2:] + deck
        hands[first] = hands[first][:-2]
    rebuilt = deal(options, hands=hands, top=real.top, dealer=real.dealer, deck=deck)
    skip = {"rng", "seed"}
    assert {k: v for k, v in rebuilt.to_json().items() if k not in skip} == {
        k: v for k, v in real.to_json().items() if k not in skip
    }


# --- replay from JSON ---------------------------------------------------------------------------


def test_replay_takes_the_json_move_log_the_api_gives() -> None:
    options = Options(players=4, seven_o=True, jump_in=True, stacking=True)
    state, log = random_game(options, 21, chooser_seed=5)
    api_log = [
        {"number": i + 1, "seat": seat, "move": move.to_json(), "source": "player"}
        for i, (seat, move) in enumerate(log)
    ]
    document = {"options": options.to_json(), "seed": 21, "moves": api_log}
    rebuilt = replay(document["options"], document["seed"], document["moves"])
    assert rebuilt.to_json() == state.to_json()
    pairs = [(seat, move.to_json()) for seat, move in log]
    assert replay(options, 21, pairs).to_json() == state.to_json()


def test_replay_refuses_a_log_entry_it_cannot_read() -> None:
    with pytest.raises(UnoError, match="'seat' and 'move'"):
        replay({"players": 2}, 1, [{"move": {"type": "draw"}}])
    with pytest.raises(uno.MalformedMove, match=r"^move log entry 1: "):
        replay({"players": 2}, 1, [(0, {"type": "fly"})])


def test_replay_says_which_entry_of_the_log_is_illegal() -> None:
    options = Options(players=2)
    _, log = random_game(options, 21, chooser_seed=5)
    flipped = [*log[:16], (1 - log[16][0], log[16][1]), *log[17:]]
    with pytest.raises(uno.IllegalMove, match=r"^move log entry 17: "):
        replay(options, 21, flipped)


# --- every seat's moves -------------------------------------------------------------------------


def test_all_legal_moves_shows_out_of_turn_catches_and_jump_ins() -> None:
    state = scenario(
        {"jump_in": True}, hands=[["R5", "G7"], ["B3", "B4"], ["R5", "Y1", "Y2"]], top="R3",
        deck=["Y9", "Y9", "Y8", "Y8", "Y6"],
    )
    apply(state, 0, play("R5"))  # next-to-last card, no Uno call
    moves = all_legal_moves(state)
    assert set(moves) == {0, 1, 2}
    assert moves[0] == [Move("uno")]
    assert Move("catch", target=0) in moves[1]  # the awaited seat
    assert set(moves[2]) == {play("R5"), Move("catch", target=0)}  # out of turn
    assert moves == {s: legal_moves(state, s) for s in range(3) if legal_moves(state, s)}


def test_all_legal_moves_is_empty_once_the_match_is_over() -> None:
    state = scenario({"single_hand": True}, hands=[["R1"], ["B9"]], top="R3", deck=["Y1"])
    apply(state, 0, play("R1"))
    assert all_legal_moves(state) == {}


# --- the state speaks the view's names ----------------------------------------------------------


def test_state_reads_as_codes_and_names_like_the_view() -> None:
    seen = Counter[str]()

    def check(state: uno.GameState, _seat: int, _move: Move) -> None:
        for seat in range(state.n):
            v = view(state, seat)
            assert state.hand(seat) == v["hand"]
            assert (state.top, state.color_name, state.phase_name, state.uno_window) == (
                v["top"], v["color"], v["phase"], v["uno_window"]
            )
        seen[state.phase_name] += 1

    random_game(Options(players=3, stacking=True), 8, chooser_seed=8, on_move=check)
    assert set(seen) <= set(PHASES) and {"play", "over"} <= set(seen)


# --- Wild Draw Four bluffs ----------------------------------------------------------------------


def test_a_wild_draw_four_held_with_the_current_colour_is_a_legal_bluff_and_flagged() -> None:
    state = scenario(hands=[["W4", "R1", "G1"], ["B1"]], top="R3", deck=YELLOWS)
    w4 = play("W4", color="blue")
    assert w4 in legal_moves(state, 0)  # legal: only a challenge punishes it
    assert is_bluff(state, 0, w4) and is_bluff(state, 0, w4.to_json())
    assert w4 not in honest_moves(state, 0)
    assert set(honest_moves(state, 0)) == set(legal_moves(state, 0)) - {
        play("W4", color=c) for c in uno.COLORS
    }
    assert view_bluffs(view(state, 0))


def test_a_wild_draw_four_without_the_current_colour_is_honest() -> None:
    state = scenario(hands=[["W4", "G1", "W"], ["B1"]], top="R3", deck=YELLOWS)
    w4 = play("W4", color="green")
    assert not is_bluff(state, 0, w4) and w4 in honest_moves(state, 0)
    assert not view_bluffs(view(state, 0))
    assert not is_bluff(state, 0, play("G1")) and not is_bluff(state, 1, w4)


@pytest.mark.parametrize("seed", range(12))
def test_is_bluff_agrees_with_what_a_challenge_would_find(seed: int) -> None:
    options = Options(players=3, stacking=True, draw_until_playable=seed % 2 == 0)
    checked = 0

    def check(state: uno.GameState, _seat: int, _move: Move) -> None:
        nonlocal checked
        seat = state.awaiting
        if seat is None:
            return
        for move in legal_moves(state, seat):
            if move.card == "W4" and len(state.hands[seat]) > 1:
                after = state.copy()
                apply(after, seat, move)
                assert is_bluff(state, seat, move) == after.w4_illegal
                assert view_bluffs(view(state, seat)) == after.w4_illegal
                checked += 1

    random_game(options, seed, chooser_seed=seed, on_move=check)
    assert checked


# --- the sensible random player -----------------------------------------------------------------


def test_random_move_chooses_the_card_first_and_always_calls_uno() -> None:
    state = scenario(hands=[["W", "R1"], ["B1"]], top="R3", deck=YELLOWS)
    rng = random.Random(1)
    picks = [random_move(legal_moves(state, 0), rng) for _ in range(2000)]
    assert all(m.uno for m in picks)
    wilds = sum(m.card == "W" for m in picks)
    assert 850 < wilds < 1150  # one card in two, not four plays in five
    assert {m.color for m in picks if m.card == "W"} == set(uno.COLORS)


def test_random_move_plays_rather_than_draws_and_takes_free_actions_first() -> None:
    state = scenario(hands=[["G1", "R1", "Y7"], ["B1", "B2"], ["B3"]], top="R3", deck=YELLOWS)
    rng = random.Random(2)
    assert {random_move(legal_moves(state, 0), rng).type for _ in range(50)} == {"play"}
    apply(state, 0, play("R1"))
    apply(state, 1, play("B1"))  # next-to-last card, no call
    assert random_move(legal_moves(state, 2), rng) == Move("catch", target=1)
    json_moves = view(state, 1)["legal_moves"]
    assert random_move(json_moves, rng) == {"type": "uno"}


def test_card_color_names_a_cards_colour_and_none_for_a_wild() -> None:
    assert [uno.card_color(c) for c in ("R7", "YS", "GR", "BD", "W", "W4")] == [
        "red", "yellow", "green", "blue", None, None
    ]


def test_card_color_refuses_a_code_that_is_no_card() -> None:
    with pytest.raises(uno.MalformedMove, match="'XX'"):
        uno.card_color("XX")


def test_random_move_refuses_an_empty_list() -> None:
    with pytest.raises(UnoError):
        random_move([], random.Random(0))


def test_sensible_random_players_finish_draw_until_playable_hands_well_under_the_cap() -> None:
    # A uniform choice over legal_moves hit the 5,000-move cap in 73 of these 100 hands.
    options = Options(players=4, single_hand=True, draw_until_playable=True)
    lengths = []
    for seed in range(100):
        state, rng = new_game(options, seed), random.Random(seed)
        while not state.finished:
            seat = state.awaiting
            assert seat is not None
            apply(state, seat, random_move(legal_moves(state, seat), rng))
        assert state.last_hand is not None and state.last_hand["reason"] == "out"
        lengths.append(state.move_count)
    assert max(lengths) < HAND_MOVE_CAP // 4
