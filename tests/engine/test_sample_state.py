"""``sample_state``: a whole state that one seat cannot tell from the real one.

The property: for every position of random games (every option, 2 to 10 seats, multi-hand
matches, out-of-turn moves) and every seat, the sample's view for that seat is the view it was
made from, field for field, legal moves included; and the engine plays the sample on to its end.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.uno import GameState, Move, Options, UnoError, new_game, random_move, sample_state, view
from games.uno import apply as apply_move
from games.uno.engine import legal_moves

from .conftest import options_strategy as any_options
from .conftest import random_game

options_strategy = any_options(single_hand=st.booleans(),
                               target_score=st.sampled_from([50, 500]))


def play_out(state: GameState, rng: random.Random, moves: int = 3000) -> None:
    for _ in range(moves):
        if state.finished:
            return
        seat = state.awaiting
        assert seat is not None
        apply_move(state, seat, random_move(legal_moves(state, seat), rng))


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(options_strategy, st.integers(0, 2**32), st.integers(0, 2**16))
def test_every_seat_sees_the_same_view_in_a_sample_and_the_engine_plays_it_on(
    options: Options, seed: int, chooser: int
) -> None:
    rng = random.Random(chooser)
    checked = 0

    def check(state: GameState, _seat: int, _move: Move) -> None:
        nonlocal checked
        if rng.random() > 0.05:  # a few positions a game, of every phase over the examples
            return
        for seat in range(state.n):
            seen = view(state, seat)
            sampled = sample_state(seen, rng)
            assert view(sampled, seat) == seen
            checked += 1
        play_out(sampled, rng)

    random_game(options, seed, chooser, on_move=check, max_moves=4000)


def test_the_hidden_cards_are_drawn_from_what_the_seat_has_not_seen() -> None:
    state, _ = random_game(Options(players=4), 7, 7, max_moves=20)
    seen = view(state, 2)
    counts: Counter[str] = Counter()
    for draw in range(200):
        sampled = sample_state(seen, random.Random(draw))
        assert sampled.hands[2] == state.hands[2]
        counts.update(view(sampled, 0)["hand"])
    assert len(counts) > 30  # spread over the unseen cards, not the real hand every time


def test_a_challenger_is_shown_the_hand_and_the_sample_keeps_it() -> None:
    from games.uno import scenario

    state = scenario(hands=[["W4", "R1", "G2"], ["B3", "B4"]], top="R5")
    apply_move(state, 0, Move("play", card="W4", color="blue"))
    apply_move(state, 1, Move("challenge"))
    seen = view(state, 1)
    assert seen["challenge_reveal"] is not None
    for draw in range(20):
        sampled = sample_state(seen, random.Random(draw))
        assert view(sampled, 1) == seen
        revealed = seen["challenge_reveal"]
        if len(revealed["hand"]) == seen["hand_counts"][revealed["seat"]]:
            assert sorted(view(sampled, revealed["seat"])["hand"]) == sorted(revealed["hand"])


def test_the_same_random_draws_give_the_same_sample() -> None:
    state, _ = random_game(Options(players=3, stacking=True), 3, 3, max_moves=30)
    seen = view(state, 1)
    first = sample_state(seen, random.Random(5)).to_json()
    assert sample_state(seen, random.Random(5)).to_json() == first


@pytest.mark.parametrize("broken", [
    {"hand": ["R1"] * 3},  # three red ones: the deck has two
    {"hand_counts": [7, 200]},
    {"hand_counts": [6, 7]},
    {"hand_counts": [7]},
    {"top": "XX"},
    {"seat": None},
])
def test_it_refuses_a_view_no_game_shows(broken: dict[str, object]) -> None:
    state, _ = random_game(Options(), 1, 1, max_moves=5)
    with pytest.raises(UnoError, match="sample_state"):
        sample_state({**view(state, 0), **broken}, random.Random(0))


def test_a_hand_that_starts_with_a_colour_to_choose_samples_too() -> None:
    from games.uno import deal

    state = deal(hands=[["R1", "G2", "B3"], ["Y4", "Y5", "R9"], ["G7", "B8", "W4"]], top="W")
    assert state.phase_name == "color"
    for seat in range(3):
        seen = view(state, seat)
        assert view(sample_state(seen, random.Random(seat)), seat) == seen


def test_a_shown_hand_the_player_has_played_from_since_still_samples() -> None:
    """The shown hand is the player's right after its Wild Draw Four; the challenger keeps
    seeing it until its own next move, while the player may play from it. Here seat 0 plays
    the shown Skip (on top now, the other copy in seat 1's hand), plays again, draws and keeps:
    its hand is the shown one's size again, not the shown cards (found by bots.evaluate:
    "more copies of card 10 than the deck has")."""
    from games.uno import scenario

    state = scenario(hands=[["W4", "BS", "B2", "G3"], ["BS", "R1", "R2", "Y3", "Y4"]],
                     top="R5", deck=["Y7", "G8", "G9", "Y1", "Y2", "B5", "B6", "R7", "R8"])
    apply_move(state, 0, Move("play", card="W4", color="blue"))
    apply_move(state, 1, Move("challenge"))  # seat 0 held no red: seat 1 draws six
    apply_move(state, 0, Move("play", card="BS"))  # a Skip at two seats: seat 0 again
    apply_move(state, 0, Move("draw"))
    apply_move(state, 0, Move("keep"))
    seen = view(state, 1)
    assert seen["challenge_reveal"]["hand"] == ["BS", "B2", "G3"]
    assert seen["hand_counts"][0] == 3 and seen["top"] == "BS"
    for draw in range(20):
        sampled = sample_state(seen, random.Random(draw))
        assert view(sampled, 1) == seen
        assert {"B2", "G3"} <= set(view(sampled, 0)["hand"])


def test_the_engine_docs_play_out_example_runs_as_written() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "engine.md").read_text()
    block = next(part.split("```", 1)[0] for part in text.split("```python\n")[1:]
                 if "def wins(" in part)
    namespace: dict[str, object] = {}
    exec(block, namespace)  # our own docs
    state, _ = random_game(Options(single_hand=True), 11, 11, max_moves=6)
    seen = view(state, state.awaiting)
    won = namespace["wins"](seen, seen["legal_moves"][0], random.Random(0), playouts=8)  # type: ignore[operator]
    assert 0 <= won <= 8


def test_the_monte_carlo_example_answers_a_legal_move_at_every_turn() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "montecarlo.py"
    spec = importlib.util.spec_from_file_location("montecarlo_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.PLAYOUTS = 2  # legality, not strength: docs/engine.md has the figures
    rng = random.Random(4)
    for seed in range(3):
        state = new_game(Options(players=3, single_hand=True, stacking=True), seed)
        while not state.finished:
            seat = state.awaiting
            assert seat is not None
            seen = view(state, seat)
            move = example.choose(seen, rng) if seat == 0 else random_move(seen["legal_moves"], rng)
            assert move in seen["legal_moves"]
            apply_move(state, seat, Move.from_json(move))
