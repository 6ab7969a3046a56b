"""Benchmark: full single hands between random legal-move players, engine vs RLCard.

Run: ``python bench/engine.py [--seconds 3]``. A "game" is one hand (single_hand=True), as
RLCard's ``UnoGame`` plays one hand. The engine plays the full official rules (Uno calls and
catches, Wild Draw Four challenges, draw-then-play-or-keep); the player's choice is part of the
measured time.

Players:
* ``rlcard-like`` (used for the ratio): uniform among the legal *plays* when there is one, else
  uniform among all legal moves (draw / keep / challenge / accept / catch ...). This matches
  RLCard's action space, where drawing is only offered when nothing can be played.
* ``uniform``: uniform over every legal move, including a voluntary draw while holding a
  playable card (official rules allow it); hands get much longer, reported for information.

The last line is exactly ``engine 2p: X games/s; rlcard 2p: Y games/s; ratio: Z``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.uno import Options, apply, legal_moves, new_game


def engine_games(
    players: int, seconds: float, uniform: bool, seed: int = 1
) -> tuple[int, int, float]:
    """Play single hands for ``seconds``; return (games, turns, elapsed)."""
    options = Options(players=players, single_hand=True)
    rnd = random.Random(seed).random
    games = turns = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):
            state = new_game(options, seed + games)
            # ``awaiting`` is the seat to move, None once the hand is over: one read per turn.
            while (seat := state.awaiting) is not None:
                moves = legal_moves(state, seat)
                move = moves[int(rnd() * len(moves))]
                if not uniform and move.type != "play" and len(moves) > 1:
                    # Rejection step: if a play exists, pick uniformly among the plays. Overall
                    # each play has probability 1/plays, exactly as filtering first, but the
                    # filter only runs when the first pick was not a play and was not the only
                    # legal move (then there is nothing to filter).
                    plays = [m for m in moves if m.type == "play"]
                    if plays:
                        move = plays[int(rnd() * len(plays))]
                apply(state, seat, move)
                turns += 1
            games += 1
    return games, turns, time.perf_counter() - start


def rlcard_games(players: int, seconds: float, seed: int = 1) -> tuple[int, int, float] | None:
    try:
        import numpy as np
        from rlcard.games.uno.game import UnoGame
    except ImportError:
        return None
    game = UnoGame(num_players=players)
    game.np_random = np.random.RandomState(seed)
    choice = np.random.RandomState(seed + 1)
    games = turns = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):
            game.init_game()
            while not game.is_over():
                actions = game.get_legal_actions()
                game.step(actions[choice.randint(len(actions))])
                turns += 1
            games += 1
    return games, turns, time.perf_counter() - start


def report(label: str, result: tuple[int, int, float]) -> float:
    games, turns, elapsed = result
    rate = games / elapsed
    print(
        f"{label}: {rate:,.0f} games/s, {turns / elapsed:,.0f} turns/s "
        f"({games} single-hand games, {turns / games:.1f} turns/game)"
    )
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    print("games = single hands; one core; engine = full official rules")
    rates: dict[str, float] = {}
    for players in (2, 4):
        rates[f"engine {players}p"] = report(
            f"engine {players}p rlcard-like player", engine_games(players, args.seconds, False)
        )
        report(f"engine {players}p uniform player", engine_games(players, args.seconds, True))
        result = rlcard_games(players, args.seconds)
        if result is not None:
            rates[f"rlcard {players}p"] = report(f"rlcard {players}p random player", result)
    if "rlcard 2p" not in rates:
        x = rates["engine 2p"]
        print(f"engine 2p: {x:.0f} games/s; rlcard not installed (pip install .[bench])")
        return
    x, y = rates["engine 2p"], rates["rlcard 2p"]
    print(f"engine 2p: {x:.0f} games/s; rlcard 2p: {y:.0f} games/s; ratio: {x / y:.2f}")


if __name__ == "__main__":
    main()
