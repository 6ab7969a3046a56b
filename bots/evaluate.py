"""Pit the reference strategies against each other in-process and print win rates.

    python -m bots.evaluate                    # 1,000 games per line, official rules
    python -m bots.evaluate --games 300 --options '{"single_hand": true}'
    python -m bots.evaluate --bot my_bot.py:choose   # yours against each reference strategy

Heads-up, each pairing plays ``--games`` games with the seats alternated; then the three play
``--games`` three-way games with the seats rotated. Game ``i`` of a line uses seed
``--seed + i``, so a run is reproducible. Win rates come with 95% Wilson intervals; a game
without a winner (a drawn match at the hand cap) counts as a win for nobody.

``--bot FILE.py:FUNCTION`` (or ``package.module:FUNCTION``; repeatable) adds your own
strategy, called as the reference ones are: ``FUNCTION(view, rng)`` with the seat's view (what
a turn payload's ``view`` holds, ``legal_moves`` included) and a ``random.Random``, returning a
move as JSON (``{"type": "play", "card": "R7"}``). Each such bot then plays each reference
strategy heads-up instead of the reference lines.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from games.uno import GameState, Move, Options, all_legal_moves, apply, new_game, view

from .strategies import STRATEGIES, Strategy

Z95 = 1.959963984540054


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default)."""
    if games == 0:
        return 0.0, 1.0
    rate = wins / games
    denominator = 1 + z * z / games
    centre = (rate + z * z / (2 * games)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def play_game(options: Options, seed: int, players: Sequence[Strategy]) -> int | None:
    """One game; ``players[s]`` plays seat ``s``. Returns the winning seat (None: no winner).

    Out-of-turn chances come first: while any seat other than the awaited one has a legal move
    (a catch, a late Uno call, a jump-in), one of them (at random, as at a real table) is asked
    and acts; then the awaited seat is asked. Each seat has its own RNG from the seed.
    """
    return play_to_end(options, seed, players).winner


def play_to_end(options: Options, seed: int, players: Sequence[Strategy]) -> GameState:
    """``play_game``'s game, played the same way; returns its finished state (scores, the
    last hand's points left...)."""
    if len(players) != options.players:
        raise ValueError(f"{len(players)} players for a {options.players}-seat game")
    state = new_game(options, seed)
    rngs = [random.Random(f"{seed}:{seat}") for seat in range(options.players)]
    table = random.Random(f"{seed}:table")
    while not state.finished:
        awaited = state.awaiting
        assert awaited is not None
        others = [s for s in all_legal_moves(state) if s != awaited]
        seat = others[table.randrange(len(others))] if others else awaited
        answer = players[seat](view(state, seat), rngs[seat])
        apply(state, seat, Move.from_json(answer))
    return state


@dataclass
class Tally:
    names: tuple[str, ...]
    wins: dict[str, int]
    games: int = 0
    no_winner: int = 0

    def lines(self) -> list[str]:
        title = " vs ".join(self.names)
        out = [
            f"{title}: {self.games} games"
            + (f", {self.no_winner} without a winner" if self.no_winner else "")
        ]
        for name in self.names:
            wins = self.wins[name]
            low, high = wilson(wins, self.games)
            out.append(
                f"  {name:<10} {wins / self.games:6.1%}  95% CI [{low:.1%}, {high:.1%}]"
                f"  ({wins}/{self.games})"
            )
        return out


def match_up(names: Sequence[str], games: int, options: Options, seed: int,
             strategies: Mapping[str, Strategy] = STRATEGIES) -> Tally:
    """``games`` games between the named strategies, seats rotated game by game. At three
    seats or more every second cycle of rotations seats them the other way round (as the
    arena's schedules do): the next player takes your Skips and Draw cards, so who sits right
    after whom must not stay as listed."""
    options = Options.from_json({**options.to_json(), "players": len(names)})
    tally = Tally(tuple(names), dict.fromkeys(names, 0))
    n = len(names)
    for i in range(games):
        cycle, shift = divmod(i, n)
        order = list(names) if cycle % 2 == 0 else [names[0], *names[:0:-1]]
        seating = [order[(s + shift) % n] for s in range(n)]
        winner = play_game(options, seed + i, [strategies[n] for n in seating])
        tally.games += 1
        if winner is None:
            tally.no_winner += 1
        else:
            tally.wins[seating[winner]] += 1
    return tally


PAIRINGS = (("heuristic", "random"), ("heuristic", "greedy"), ("greedy", "random"))


def load_strategy(spec: str) -> tuple[str, Strategy]:
    """``FILE.py:FUNCTION`` or ``package.module:FUNCTION`` -> (its name, the function)."""
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name:
        raise SystemExit(f"--bot {spec!r}: give FILE.py:FUNCTION or package.module:FUNCTION")
    if where.endswith(".py"):
        path = Path(where)
        found = importlib.util.spec_from_file_location(path.stem, path)
        if found is None or found.loader is None or not path.is_file():
            raise SystemExit(f"--bot {spec!r}: no file {where}")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    function = getattr(module, name, None)
    if not callable(function):
        raise SystemExit(f"--bot {spec!r}: {where} has no function {name}")
    label = f"{Path(where).stem if where.endswith('.py') else where}:{name}"
    return label, function


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per line (1000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (1)")
    parser.add_argument(
        "--options", default="{}", help="engine options as JSON, players excluded ({})"
    )
    parser.add_argument(
        "--bot", action="append", default=[], metavar="FILE.py:FUNCTION",
        help="your strategy, (view, rng) -> move JSON, against each reference one (repeatable)",
    )
    args = parser.parse_args(argv)
    options = Options.from_json({**json.loads(args.options), "players": 2})
    print(f"options: {json.dumps({k: v for k, v in options.to_json().items() if k != 'players'})}")
    if args.bot:
        yours = dict(load_strategy(spec) for spec in args.bot)
        everyone = {**STRATEGIES, **yours}
        for name in yours:
            for reference in STRATEGIES:
                tally = match_up((name, reference), args.games, options, args.seed, everyone)
                print("\n".join(tally.lines()))
        return
    for pair in PAIRINGS:
        print("\n".join(match_up(pair, args.games, options, args.seed).lines()))
    print("\n".join(match_up(tuple(STRATEGIES), args.games, options, args.seed).lines()))


if __name__ == "__main__":
    main()
