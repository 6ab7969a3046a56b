"""Replay the checked-in golden games (regenerate: ``python -m tests.engine.golden_games``)."""

from __future__ import annotations

import json

import pytest

from games.uno import Move, Options, replay

from .golden_games import CASES, GOLDEN_DIR


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_game_replays_to_recorded_final_scores(name: str) -> None:
    data = json.loads((GOLDEN_DIR / f"{name}.json").read_text())
    options = Options.from_json(data["options"])
    moves = [(seat, Move.from_json(move)) for seat, move in data["moves"]]
    state = replay(options, data["seed"], moves)
    final = data["final"]
    assert state.finished
    assert state.scores == final["scores"]
    assert state.winner == final["winner"]
    assert state.hand_number == final["hand_number"]
    assert state.move_count == final["move_count"] == len(moves)
    assert state.last_hand == final["last_hand"]


def test_golden_cases_are_all_checked_in() -> None:
    assert {p.stem for p in GOLDEN_DIR.glob("*.json")} == set(CASES)


LEGACY = GOLDEN_DIR.parent / "legacy" / "three_player_match_to_200_before_draws_waited.json"


def test_a_game_recorded_before_every_draw_waited_for_a_keep_replays_to_its_final_scores(
) -> None:
    # The golden game as recorded until draws waited for the drawer: no `keep` after its 72
    # unplayable drawn cards. Stored games like it must still replay (``apply_recorded``).
    data = json.loads(LEGACY.read_text())
    state = replay(data["options"], data["seed"], data["moves"])
    final = data["final"]
    assert state.finished and state.scores == final["scores"] and state.winner == final["winner"]
    assert state.hand_number == final["hand_number"] and state.last_hand == final["last_hand"]
    assert state.move_count == final["move_count"] == len(data["moves"])
