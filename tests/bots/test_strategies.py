"""The in-process reference strategies: always legal, each plays as described, and the
heuristic beats the other two."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots.evaluate import match_up, play_game, wilson
from bots.strategies import STRATEGIES, choose_greedy, choose_heuristic, choose_random
from games.uno import (
    GameState,
    Move,
    Options,
    all_legal_moves,
    apply,
    new_game,
    scenario,
    view,
)

RNG = random.Random(0)
DECK = ["Y5", "Y6", "Y7", "Y8", "Y9", "Y1", "Y2", "Y3"]
# An opponent's hand of seven (each card no more often than the deck has it).
SEVEN = ["B1", "B1", "B2", "B3", "B4", "B5", "B6"]


def ask(strategy: Any, state: GameState, seat: int) -> dict[str, Any]:
    seat_view = view(state, seat)
    move = strategy(seat_view, RNG)
    assert move in seat_view["legal_moves"]
    return move


# --- always a legal move ------------------------------------------------------------------------

TABLES = [
    Options(players=2, single_hand=True),
    Options(players=3, single_hand=True, stacking=True, jump_in=True, seven_o=True),
    Options(players=4, single_hand=True, draw_until_playable=True, deck_2018=True),
    Options(players=5, single_hand=True, deck_2018=True, start_2022=True, seven_o=True),
]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("options", TABLES, ids=lambda o: f"{o.players}p")
def test_every_strategy_answers_a_legal_move_for_any_seat_asked(
    name: str, options: Options
) -> None:
    strategy = STRATEGIES[name]
    rng = random.Random(1)
    for seed in range(6):
        state = new_game(options, seed)
        while not state.finished:
            askable = all_legal_moves(state)
            answers = {seat: ask(strategy, state, seat) for seat in askable}  # in turn or not
            seat = rng.choice(sorted(askable))
            apply(state, seat, Move.from_json(answers[seat]))
        assert state.last_hand is not None and state.last_hand["reason"] == "out"


def test_strategies_share_one_signature_and_the_registry_names_them() -> None:
    expected = {"random": choose_random, "greedy": choose_greedy, "heuristic": choose_heuristic}
    assert expected == STRATEGIES


# --- how each plays -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_strategy_calls_uno_with_its_next_to_last_card(name: str) -> None:
    state = scenario(hands=[["R5", "G1"], ["B1", "B2"]], top="R3", deck=DECK)
    assert ask(STRATEGIES[name], state, 0) == {"type": "play", "card": "R5", "uno": True}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_strategy_catches_a_missed_uno_call_even_out_of_turn(name: str) -> None:
    state = scenario(hands=[["R5", "G1"], ["B1", "B2"], ["Y1", "Y2"]], top="R3", deck=DECK)
    apply(state, 0, Move("play", card="R5"))  # no call
    assert ask(STRATEGIES[name], state, 2) == {"type": "catch", "target": 0}  # not its turn
    assert ask(STRATEGIES[name], state, 0) == {"type": "uno"}  # the offender's late call


def test_greedy_sheds_its_highest_points_first() -> None:
    state = scenario(hands=[["R1", "RS", "W", "G9"], ["B1", "B1", "B2"]], top="R3", deck=DECK)
    move = ask(choose_greedy, state, 0)
    assert move == {"type": "play", "card": "W", "color": "red"}  # 50 points; colour held most
    state = scenario(hands=[["R1", "RS", "G9"], ["B1", "B1", "B2"]], top="R3", deck=DECK)
    assert ask(choose_greedy, state, 0)["card"] == "RS"


def test_heuristic_keeps_wilds_for_late() -> None:
    hands = [["W", "R5", "G1", "G2", "B7"], SEVEN]
    assert ask(choose_heuristic, scenario(hands=hands, top="R3", deck=DECK), 0)["card"] == "R5"
    hands = [["W", "Y5", "G1", "G2", "B7"], SEVEN]  # only the wild plays: draw instead
    assert ask(choose_heuristic, scenario(hands=hands, top="R3", deck=DECK), 0) == {
        "type": "draw"
    }


def test_heuristic_plays_a_wild_naming_the_colour_it_holds_most_when_someone_is_near_out() -> None:
    hands = [["W", "Y5", "G1", "G2", "B7"], ["B1", "B2"]]
    move = ask(choose_heuristic, scenario(hands=hands, top="R3", deck=DECK), 0)
    assert move == {"type": "play", "card": "W", "color": "green"}


def test_heuristic_names_the_first_colour_it_holds_most() -> None:
    state = scenario(hands=[["B1", "B2", "G1", "W"], ["R1", "R1", "R2"]], top="W", deck=DECK)
    assert ask(choose_heuristic, state, 0) == {"type": "color", "color": "blue"}


def test_heuristic_never_bluffs_a_wild_draw_four() -> None:
    hands = [["W4", "R1", "G1", "G2"], ["B1", "B2"]]  # the next seat is about to go out
    assert ask(choose_heuristic, scenario(hands=hands, top="R3", deck=DECK), 0)["card"] == "R1"
    hands = [["W4", "Y1", "G1", "G2"], ["B1", "B2"]]  # honest: it is the best attack
    assert ask(choose_heuristic, scenario(hands=hands, top="R3", deck=DECK), 0)["card"] == "W4"


@pytest.mark.parametrize(("held", "expected"), [(1, "accept"), (5, "challenge")])
def test_heuristic_challenges_a_wild_draw_four_when_the_odds_favour_it(
    held: int, expected: str
) -> None:
    player = ["W4", *["G1", "G2", "G3", "G4", "G5"][:held]]
    state = scenario(hands=[player, ["B1", "B2", "B3"]], top="R3", deck=DECK)
    apply(state, 0, Move("play", card="W4", color="blue", uno=held == 1))
    assert ask(choose_heuristic, state, 1) == {"type": expected}


def test_heuristic_stacks_penalties_when_the_table_allows_it() -> None:
    opts = {"stacking": True}
    state = scenario(opts, hands=[["RD", "G1", "G2"], ["BD", "B2", "B3"], ["Y4", "Y4", "Y6"]],
                     top="R3", deck=DECK)
    apply(state, 0, Move("play", card="RD"))
    assert ask(choose_heuristic, state, 1) == {"type": "play", "card": "BD"}
    state = scenario(opts, hands=[["W4", "G1", "G2"], ["W4", "B2", "B3"], ["Y4", "Y4", "Y6"]],
                     top="R3", deck=DECK)
    apply(state, 0, Move("play", card="W4", color="blue"))
    assert ask(choose_heuristic, state, 1)["card"] == "W4"


def test_heuristic_jumps_in_out_of_turn() -> None:
    hands = [["R5", "G1", "G2"], ["B1", "B1", "B2"], ["R5", "Y1"]]
    state = scenario({"jump_in": True}, hands=hands, top="R3", deck=DECK)
    apply(state, 0, Move("play", card="R5"))
    assert ask(choose_heuristic, state, 2) == {"type": "play", "card": "R5", "uno": True}


def test_heuristic_swaps_hands_with_the_smallest_under_seven_o() -> None:
    hands = [["R7", "G1", "G2", "B3", "B4", "Y9"], SEVEN[:6], ["Y1", "Y2"]]
    move = ask(choose_heuristic, scenario({"seven_o": True}, hands=hands, top="R3", deck=DECK), 0)
    assert move == {"type": "play", "card": "R7", "target": 2}


# --- the heuristic wins -------------------------------------------------------------------------


@pytest.mark.parametrize("rival", ["random", "greedy"])
def test_heuristic_beats_random_and_greedy_heads_up(rival: str) -> None:
    # 300 single hands, seats alternated, seeds 1-300: it wins 219 against random and 212
    # against greedy; over 1,000 hands about 70% against either (95% intervals above 65%).
    # 58% (174) leaves a wide margin for a future change of the strategies.
    tally = match_up(("heuristic", rival), 300, Options(single_hand=True), seed=1)
    assert tally.games == 300
    assert tally.wins["heuristic"] >= 0.58 * 300
    assert wilson(tally.wins["heuristic"], 300)[0] > 0.5


def test_play_game_is_reproducible_from_its_seed() -> None:
    players = [STRATEGIES["heuristic"], STRATEGIES["random"], STRATEGIES["greedy"]]
    options = Options(players=3, single_hand=True, jump_in=True)
    winners = [play_game(options, seed, players) for seed in range(20)]
    assert winners == [play_game(options, seed, players) for seed in range(20)]


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(70, 100)
    assert round(low, 4) == 0.6042 and round(high, 4) == 0.7811
    assert wilson(0, 0) == (0.0, 1.0)
