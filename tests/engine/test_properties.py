"""Property tests over thousands of random games, across options and 2-10 seats."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.uno import GameState, Move, Options, apply, legal_moves, new_game, replay, view
from games.uno.cards import CODES

from .conftest import options_strategy as any_options
from .conftest import random_game

SETTINGS = settings(
    max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

options_strategy = any_options()


def deck_size(state: GameState) -> int:
    return 112 if state.options.deck_2018 else 108


def card_total(state: GameState) -> int:
    return sum(len(h) for h in state.hands) + len(state.deck) + len(state.discard)


@SETTINGS
@given(options_strategy, st.integers(0, 2**32), st.integers(0, 2**16))
def test_every_card_accounted_for_game_ends_and_replay_reproduces(
    options: Options, seed: int, chooser: int
) -> None:
    def check(state: GameState, seat: int, move: Move) -> None:
        assert card_total(state) == deck_size(state)

    state, log = random_game(options, seed, chooser, on_move=check)
    assert state.finished  # every game ends (hand turn cap documented in docs/rules.md)
    assert replay(options, seed, log).to_json() == state.to_json()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(2, 10), st.booleans(), st.integers(0, 2**32), st.integers(0, 2**16))
def test_matches_to_target_end_with_winner_at_target(
    players: int, stacking: bool, seed: int, chooser: int
) -> None:
    options = Options(players=players, stacking=stacking, target_score=150)
    hands_seen: set[int] = set()

    def check(state: GameState, seat: int, move: Move) -> None:
        assert card_total(state) == 108
        hands_seen.add(state.hand_number)

    state, _ = random_game(options, seed, chooser, on_move=check)
    assert state.finished and state.winner is not None
    assert state.scores[state.winner] >= 150 and max(state.scores) == state.scores[state.winner]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(options_strategy, st.integers(0, 2**32), st.integers(0, 2**16))
def test_no_view_contains_another_players_cards(options: Options, seed: int, chooser: int) -> None:
    rnd = random.Random(chooser)

    def check(state: GameState, seat: int, move: Move) -> None:
        if rnd.random() > 0.2:
            return
        for s in range(options.players):
            data = view(state, s)
            assert data["hand"] == [CODES[c] for c in state.hands[s]]
            assert data["hand_counts"] == [len(h) for h in state.hands]
            assert not {"hands", "deck", "seed", "discard", "rng"} & set(data)
            pending = data["pending"] or {}
            assert "player_held_color" not in pending
            if "card" in pending:
                assert pending["seat"] == s
            own = set(data["hand"])
            assert all(m["card"] in own for m in data["legal_moves"] if "card" in m)
            json.dumps(data)

    random_game(options, seed, chooser, on_move=check)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(options_strategy, st.integers(0, 2**32), st.integers(0, 2**16))
def test_legal_moves_all_apply_and_state_json_round_trips(
    options: Options, seed: int, chooser: int
) -> None:
    rnd = random.Random(chooser)

    def check(state: GameState, seat: int, move: Move) -> None:
        if rnd.random() > 0.05:
            return
        restored = GameState.from_json(json.loads(json.dumps(state.to_json())))
        assert restored.to_json() == state.to_json()
        for s in range(options.players):
            for m in legal_moves(state, s):
                trial = state.copy()
                apply(trial, s, Move.from_json(m.to_json()))

    random_game(options, seed, chooser, on_move=check)


def test_two_thousand_seeded_default_rule_hands_all_end_with_cards_accounted() -> None:
    rnd = random.Random(0)
    for seed in range(2000):
        players = 2 + seed % 9
        state = new_game(Options(players=players, single_hand=True), seed)
        while not state.finished:
            seat = state.awaiting
            assert seat is not None
            moves = legal_moves(state, seat)
            plays = [m for m in moves if m.type == "play"]
            pool = plays if plays and rnd.random() < 0.7 else moves
            apply(state, seat, pool[int(rnd.random() * len(pool))])
        assert card_total(state) == 108
        assert state.last_hand is not None and state.last_hand["reason"] == "out"
