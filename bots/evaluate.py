"""Pit the reference strategies against each other in-process and print win rates.

    python -m bots.evaluate                    # 1,000 games per line, official rules
    python -m bots.evaluate --games 300 --options '{"single_hand": true}'
    python -m bots.evaluate --bot my_bot.py:choose   # yours against each reference strategy

Heads-up, each pairing plays ``--games`` games with the seats alternated; then the three play
``--games`` three-way games with the seats rotated. Game ``i`` of a line uses seed
``--seed + i``, so a run is reproducible. Win rates come with 95% Wilson intervals; a game
without a winner (a drawn match at the hand cap) counts as a win for nobody. Seats are asked
as the arena asks bots: only when awaited (``--race``: out of turn too, as at a table of
people). A bot that answers something illegal stops the run, naming the seed, seat and move.

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

from games.uno import (
    GameState,
    Move,
    Options,
    OptionsError,
    all_legal_moves,
    apply,
    new_game,
    view,
)

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


class BadAnswer(Exception):
    """A strategy answered something that is not a legal move (or raised): which game, seat
    and move number, and what it answered, so that the position can be looked at again
    (``new_game(options, seed)`` and the same players replay it)."""

    def __init__(self, *, seed: int, seat: int, move_number: int, answer: object,
                 error: BaseException) -> None:
        super().__init__(f"seed {seed}, seat {seat}, move {move_number + 1}: answered "
                         f"{answer!r}: {type(error).__name__}: {error}")
        self.seed, self.seat, self.move_number = seed, seat, move_number
        self.answer, self.error = answer, error


def play_game(options: Options, seed: int, players: Sequence[Strategy], *,
              race: bool = False) -> int | None:
    """One game; ``players[s]`` plays seat ``s``. Returns the winning seat (None: no winner).

    As the arena plays bots, only the awaited seat is asked (its legal moves include a catch
    of a missed Uno call). ``race``: out-of-turn chances come first, as at a table of people
    posting moves: while any seat other than the awaited one has a legal move (a catch, a
    late Uno call, a jump-in), one of them (at random) is asked and acts; then the awaited
    seat. Each seat has its own RNG from the seed. An answer that is not a legal move raises
    ``BadAnswer``.
    """
    return play_to_end(options, seed, players, race=race).winner


def play_to_end(options: Options, seed: int, players: Sequence[Strategy], *,
                race: bool = False) -> GameState:
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
        seat = awaited
        if race:
            others = [s for s in all_legal_moves(state) if s != awaited]
            seat = others[table.randrange(len(others))] if others else awaited
        seen = view(state, seat)  # outside the try: an engine error is not the bot's
        answer: object = None
        try:
            answer = players[seat](seen, rngs[seat])
            apply(state, seat, Move.from_json(answer))
        except Exception as error:
            raise BadAnswer(seed=seed, seat=seat, move_number=state.move_count, answer=answer,
                            error=error) from error
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
        width = max(10, *map(len, self.names))
        for name in self.names:
            wins = self.wins[name]
            low, high = wilson(wins, self.games)
            out.append(
                f"  {name:<{width}} {wins / self.games:6.1%}  95% CI [{low:.1%}, {high:.1%}]"
                f"  ({wins}/{self.games})"
            )
        return out


def match_up(names: Sequence[str], games: int, options: Options, seed: int,
             strategies: Mapping[str, Strategy] = STRATEGIES, *, race: bool = False) -> Tally:
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
        try:
            winner = play_game(options, seed + i, [strategies[n] for n in seating], race=race)
        except BadAnswer as bad:
            bad.add_note(f"{seating[bad.seat]} played seat {bad.seat}; seats: {seating}")
            raise
        tally.games += 1
        if winner is None:
            tally.no_winner += 1
        else:
            tally.wins[seating[winner]] += 1
    return tally


PAIRINGS = (("heuristic", "random"), ("heuristic", "greedy"), ("greedy", "random"))


def load_strategy(spec: str, *, option: str = "--bot") -> tuple[str, Strategy]:
    """``FILE.py:FUNCTION`` or ``package.module:FUNCTION`` -> (its name, the function); a
    SystemExit naming ``option`` if there is no such function."""
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name:
        raise SystemExit(f"{option} {spec!r}: give FILE.py:FUNCTION or package.module:FUNCTION")
    if where.endswith(".py"):
        path = Path(where)
        found = importlib.util.spec_from_file_location(path.stem, path)
        if found is None or found.loader is None or not path.is_file():
            raise SystemExit(f"{option} {spec!r}: no file {where}")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    function = getattr(module, name, None)
    if not callable(function):
        raise SystemExit(f"{option} {spec!r}: {where} has no function {name}")
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
    parser.add_argument(
        "--race", action="store_true",
        help="also ask the seats not awaited for their out-of-turn moves (catches, late Uno "
        "calls, jump-ins), as at a table of people; the arena asks a bot only when awaited",
    )
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games: at least 1")
    options = _options(args.options)
    print(f"options: {json.dumps({k: v for k, v in options.to_json().items() if k != 'players'})}")
    if args.bot:
        yours = dict(load_strategy(spec) for spec in args.bot)
        everyone = {**STRATEGIES, **yours}
        for name in yours:
            for reference in STRATEGIES:
                print("\n".join(_lines((name, reference), args, options, everyone)))
        return
    for pair in PAIRINGS:
        print("\n".join(_lines(pair, args, options, STRATEGIES)))
    print("\n".join(_lines(tuple(STRATEGIES), args, options, STRATEGIES)))


def _options(given: str) -> Options:
    """``--options`` as the engine takes them, or the command's end saying what is wrong."""
    try:
        chosen = json.loads(given)
    except ValueError as exc:
        raise SystemExit(f"--options: not JSON ({exc})") from None
    if not isinstance(chosen, dict) or "players" in chosen:
        raise SystemExit("--options: a JSON object of engine options, without players (the "
                         "heads-up lines seat 2, the three-way one 3)")
    try:
        return Options.from_json({**chosen, "players": 2})
    except OptionsError as exc:
        raise SystemExit(f"--options: {exc}") from None


def _lines(names: Sequence[str], args: argparse.Namespace, options: Options,
           strategies: Mapping[str, Strategy]) -> list[str]:
    """One line's table, or the command's end naming the bad answer that stopped it."""
    try:
        return match_up(names, args.games, options, args.seed, strategies,
                        race=args.race).lines()
    except BadAnswer as bad:
        notes = "; ".join(getattr(bad, "__notes__", []))
        raise SystemExit(f"{' vs '.join(names)}: {bad} ({notes})") from bad


if __name__ == "__main__":
    main()
