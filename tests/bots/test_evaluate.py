"""``python -m bots.evaluate --bot FILE.py:FUNCTION``: a bot writer's own strategy, offline,
against each reference strategy."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from bots import evaluate
from bots.strategies import STRATEGIES
from games.uno import Options

FIRST_PLAY = '''
def choose(view, rng):
    moves = view["legal_moves"]
    plays = [m for m in moves if m["type"] == "play"]
    return (plays or moves)[0]
'''


def test_it_plays_your_strategy_from_a_file_against_each_reference_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "my_bot.py"
    mine.write_text(FIRST_PLAY)
    evaluate.main(["--games", "4", "--options", '{"single_hand": true}',
                   "--bot", f"{mine}:choose"])
    out = capsys.readouterr().out
    for reference in ("random", "greedy", "heuristic"):
        assert f"my_bot:choose vs {reference}: 4 games" in out
    assert "greedy vs random" not in out  # the reference lines give way to yours


def test_the_starter_bot_plays_offline_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    starter = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.py"
    evaluate.main(["--games", "4", "--options", '{"single_hand": true}',
                   "--bot", f"{starter}:choose"])
    assert "starter_bot:choose vs heuristic: 4 games" in capsys.readouterr().out


def test_it_takes_a_strategy_from_a_module_too(capsys: pytest.CaptureFixture[str]) -> None:
    evaluate.main(["--games", "2", "--options", '{"single_hand": true}',
                   "--bot", "bots.strategies:choose_greedy"])
    assert "bots.strategies:choose_greedy vs heuristic: 2 games" in capsys.readouterr().out


@pytest.mark.parametrize("spec", ["choose", "missing_file.py:choose", "bots.strategies:nothing",
                                  ":choose"])
def test_it_says_what_is_wrong_with_a_bot_it_cannot_load(spec: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        evaluate.main(["--games", "1", "--bot", spec])
    assert "--bot" in str(stopped.value)


def test_it_asks_a_bot_only_when_awaited_as_the_arena_does() -> None:
    asked_out_of_turn = []

    def watching(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        if view["awaiting"] != view["seat"]:
            asked_out_of_turn.append(view["move_count"])
        return STRATEGIES["heuristic"](view, rng)

    options = Options(players=3, single_hand=True, jump_in=True)
    for seed in range(30):
        evaluate.play_game(options, seed, [watching, watching, watching])
    assert asked_out_of_turn == []
    for seed in range(30):
        evaluate.play_game(options, seed, [watching, watching, watching], race=True)
    assert asked_out_of_turn  # a table of people races: catches, late calls, jump-ins


def test_it_stops_at_an_illegal_answer_naming_the_seed_seat_and_move(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "draws.py"
    mine.write_text("def choose(view, rng):\n    return {'type': 'draw'}\n")
    with pytest.raises(SystemExit) as stopped:
        evaluate.main(["--games", "4", "--options", '{"single_hand": true}',
                       "--bot", f"{mine}:choose"])
    message = str(stopped.value)
    assert message.startswith("draws:choose vs random: seed 1, seat ")
    assert "answered {'type': 'draw'}: IllegalMove: " in message
    assert "draws:choose played seat" in message


def test_it_refuses_players_in_the_options() -> None:
    with pytest.raises(SystemExit, match="without players"):
        evaluate.main(["--options", '{"players": 4}'])


@pytest.mark.parametrize(("args", "said"), [
    (["--options", '{"stacking": 1}'], "--options: stacking: must be a boolean"),
    (["--options", '{"bogus": true}'], "--options: bogus: unknown option"),
    (["--options", "nope"], "--options: not JSON"),
])
def test_it_refuses_bad_options_in_one_line(args: list[str], said: str) -> None:
    """Before: the engine's OptionsError escaped as a traceback."""
    with pytest.raises(SystemExit, match=said):
        evaluate.main(args)


def test_it_refuses_fewer_than_one_game(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a ZeroDivisionError while printing the table."""
    with pytest.raises(SystemExit):
        evaluate.main(["--games", "0"])
    assert "--games: at least 1" in capsys.readouterr().err
