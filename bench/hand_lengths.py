"""Moves per hand of random players: the figures quoted under "Turn cap" in docs/rules.md.

Run: ``python bench/hand_lengths.py [--hands 1000] [--uniform-hands 100]`` (the engine alone,
no Django; about 15 seconds for the defaults).

Hand ``i`` is a single hand (``single_hand``) dealt with seed ``i``, ``i`` from 0; the awaited
seat moves every time (no one else is asked, though the awaited seat may catch), choosing
with ``random.Random(i)``. A hand's length is ``state.move_count``: every applied move, plays,
draws, keeps, colour choices, challenges, catches and Uno calls alike.

It prints, for the sensible random player ``games.uno.random_move``, one line per table
(official rules with 2, 4 and 10 players; 4 players with ``draw_until_playable``; 4 players
with every house rule and the 2018 deck) over ``--hands`` hands: the median (of an even count
the upper middle one), the 99th percentile (nearest rank), the longest hand, and how many
hands reached ``HAND_MOVE_CAP``. Then, for a player choosing uniformly over ``legal_moves``,
one line per table (4 players, official rules and with ``draw_until_playable``) over
``--uniform-hands`` hands: the median and how many hands reached the cap.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.uno import HAND_MOVE_CAP, Move, Options, apply, legal_moves, new_game, random_move

Chooser = Callable[[list[Move], random.Random], Move]

HOUSE_RULES = {
    "stacking": True,
    "seven_o": True,
    "jump_in": True,
    "draw_until_playable": True,
    "deck_2018": True,
}

TABLES: tuple[tuple[str, dict[str, object]], ...] = (
    ("official rules, 2 players", {"players": 2}),
    ("official rules, 4 players", {"players": 4}),
    ("official rules, 10 players", {"players": 10}),
    ("4 players, draw_until_playable", {"players": 4, "draw_until_playable": True}),
    ("4 players, every house rule and the 2018 deck", {"players": 4, **HOUSE_RULES}),
)

UNIFORM_TABLES: tuple[tuple[str, dict[str, object]], ...] = (
    ("official rules, 4 players", {"players": 4}),
    ("4 players, draw_until_playable", {"players": 4, "draw_until_playable": True}),
)


def uniform_move(moves: list[Move], rng: random.Random) -> Move:
    """Any legal move, each equally likely."""
    return moves[rng.randrange(len(moves))]


def hand_length(options: Options, seed: int, choose: Chooser) -> tuple[int, bool]:
    """Moves applied in the single hand dealt with ``seed``, and whether it hit the cap."""
    state, rng = new_game(options, seed), random.Random(seed)
    while (seat := state.awaiting) is not None:
        apply(state, seat, choose(legal_moves(state, seat), rng))
    capped = state.last_hand is not None and state.last_hand["reason"] == "turn_cap"
    return state.move_count, capped


def median(ordered: Sequence[int]) -> int:
    """The median of an ascending sequence; of an even count, the upper of the middle two."""
    return ordered[len(ordered) // 2]


def nearest_rank(ordered: Sequence[int], fraction: float) -> int:
    """The nearest-rank percentile of an ascending sequence (``fraction`` in (0, 1])."""
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def measure(options: dict[str, object], hands: int, choose: Chooser) -> tuple[list[int], int]:
    """Sorted lengths of ``hands`` hands (seeds 0 ..) and how many reached the cap."""
    opts = Options.from_json({**options, "single_hand": True})
    results = [hand_length(opts, seed, choose) for seed in range(hands)]
    return sorted(length for length, _ in results), sum(capped for _, capped in results)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=1000, help="hands per table (1000)")
    parser.add_argument(
        "--uniform-hands", type=int, default=100, help="hands of the uniform player (100)"
    )
    args = parser.parse_args(argv)
    print(f"random_move, {args.hands} single hands per table (seeds 0-{args.hands - 1}):")
    for title, options in TABLES:
        lengths, capped = measure(options, args.hands, random_move)
        print(
            f"  {title}: median {median(lengths)}, "
            f"99th percentile {nearest_rank(lengths, 0.99)}, longest {lengths[-1]}, "
            f"{capped} reached the cap ({HAND_MOVE_CAP})"
        )
    n = args.uniform_hands
    print(f"uniform over legal_moves, {n} single hands per table (seeds 0-{n - 1}):")
    for title, options in UNIFORM_TABLES:
        lengths, capped = measure(options, n, uniform_move)
        print(f"  {title}: median {median(lengths)}, {capped} of {n} reached the cap")


if __name__ == "__main__":
    main()
