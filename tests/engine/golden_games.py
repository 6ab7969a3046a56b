"""Golden games: seeded games with their full move logs and final results.

Regenerate (after an intentional rule or RNG change) with::

    python -m tests.engine.golden_games

and review the diff of ``tests/engine/golden/*.json`` before committing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from games.uno import GameState, Move, Options, apply, legal_moves, new_game

GOLDEN_DIR = Path(__file__).parent / "golden"

CASES: dict[str, tuple[Options, int]] = {
    "two_player_single_hand": (Options(players=2, single_hand=True), 2024),
    "four_player_single_hand_stacking_jump_in": (
        Options(players=4, single_hand=True, stacking=True, jump_in=True),
        7,
    ),
    "five_player_seven_o_2018_deck_2022_start": (
        Options(players=5, single_hand=True, seven_o=True, deck_2018=True, start_2022=True),
        99,
    ),
    "three_player_match_to_200": (Options(players=3, target_score=200), 31337),
}


def play_out(options: Options, seed: int) -> tuple[GameState, list[tuple[int, Move]]]:
    """Deterministic pseudo-random players (out-of-turn moves included) seeded from ``seed``."""
    rnd = random.Random(seed)
    state = new_game(options, seed)
    log: list[tuple[int, Move]] = []
    while not state.finished:
        seat = state.awaiting
        assert seat is not None
        other = rnd.randrange(options.players)
        extra = legal_moves(state, other) if other != seat else []
        if extra and rnd.random() < 0.3:
            seat, moves = other, extra
        else:
            moves = legal_moves(state, seat)
            plays = [m for m in moves if m.type == "play"]
            if plays and rnd.random() < 0.8:
                moves = plays
        move = moves[rnd.randrange(len(moves))]
        apply(state, seat, move)
        log.append((seat, move))
    return state, log


def record(name: str) -> dict[str, Any]:
    options, seed = CASES[name]
    state, log = play_out(options, seed)
    return {
        "options": options.to_json(),
        "seed": seed,
        "moves": [[seat, move.to_json()] for seat, move in log],
        "final": {
            "scores": state.scores,
            "winner": state.winner,
            "hand_number": state.hand_number,
            "move_count": state.move_count,
            "last_hand": state.last_hand,
        },
    }


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in CASES:
        path = GOLDEN_DIR / f"{name}.json"
        path.write_text(json.dumps(record(name), indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
