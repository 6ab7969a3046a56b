"""Round-robin schedules for tournaments: who sits where in which game, with which seed.

Pure Python, no Django. The tournament services turn each ``ScheduledGame`` into a real game
with ``options.players == table_size``, seating ``players`` in seat order and dealing with
``seed``, so a tournament is replayed exactly from its own seed.

Tables: every combination of ``table_size`` entrants is a table (every pair, with two seats).
When there would be more than ``max_tables`` combinations, a balanced subset is drawn instead
(see ``balanced_tables``).

Seats: each table plays ``games_per_pairing`` games. The players are seated by cyclic rotation
(rotation ``r`` puts the table's ``(s + r) % t``-th member in seat ``s``). The games come in
full cycles of all ``t`` rotations, which seat every member once in every seat; the remainder
(``games_per_pairing % t`` games) takes, game by game, the rotation that least repeats seats
the members already had over the whole tournament. So each entrant sits in each seat exactly
equally often when ``games_per_pairing`` is a multiple of the table size, and as near as the
greedy choice gets otherwise (within one in every case the tests check).

Duplicate deals: each deal is played ``t`` times, once in each rotation, with the same seed, so
every member holds every hand of the deal once and the luck of the cards cancels out;
``games_per_pairing`` must then be a multiple of the table size.

Order: the games are listed pass by pass (the first game, or deal, of every table, then the
second...), so a tournament stopped part-way has played its tables about equally.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations

MIN_TABLE = 2
MAX_TABLE = 10
MAX_TABLES = 1000  # more combinations than this and a balanced subset is drawn
_CANDIDATES = 16  # seeded partitions tried per round of a balanced subset

Entrant = Hashable


class ScheduleError(ValueError):
    """The tournament's parameters cannot be scheduled (the message says why)."""


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    index: int  # position in the schedule, from 0
    players: tuple[Entrant, ...]  # the entrant in each seat
    deal: int  # games of the same deal (duplicate deals) share it, and so their seed
    seed: int  # the engine seed: 63 bits, derived from the tournament seed and the deal


def game_seed(tournament_seed: int, deal: int) -> int:
    """The engine seed of deal ``deal``: the first 63 bits of a SHA-256 of both numbers.

    Distinct deals get unrelated seeds, and 63 bits fit a signed 64-bit database column.
    """
    digest = hashlib.sha256(f"uno-arena/tournament/{tournament_seed}/deal/{deal}".encode())
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def round_robin(
    entrants: Sequence[Entrant],
    *,
    seed: int,
    table_size: int = 2,
    games_per_pairing: int = 1,
    duplicate_deals: bool = False,
    max_tables: int = MAX_TABLES,
) -> list[ScheduledGame]:
    """The whole schedule of a tournament; see the module docstring for the rules."""
    _check(entrants, table_size, games_per_pairing, duplicate_deals)
    if math.comb(len(entrants), table_size) <= max_tables:
        tables = [tuple(group) for group in combinations(entrants, table_size)]
    else:
        tables = balanced_tables(entrants, table_size=table_size, tables=max_tables, seed=seed)
    if duplicate_deals:
        return _duplicate_schedule(tables, table_size, games_per_pairing // table_size, seed)
    return _rotating_schedule(tables, table_size, games_per_pairing, seed)


def _check(entrants: Sequence[Entrant], size: int, games: int, duplicate: bool) -> None:
    if len(set(entrants)) != len(entrants):
        raise ScheduleError("an entrant is listed twice")
    if not MIN_TABLE <= size <= MAX_TABLE:
        raise ScheduleError(f"the table size must be between {MIN_TABLE} and {MAX_TABLE}")
    if len(entrants) < size:
        raise ScheduleError(f"a table of {size} needs at least {size} entrants")
    if games < 1:
        raise ScheduleError("each table plays at least one game")
    if duplicate and games % size:
        raise ScheduleError(
            f"with duplicate deals the games per pairing must be a multiple of the table size"
            f" ({size}): each deal is played once in each seating"
        )


def seating(table: tuple[Entrant, ...], rotation: int) -> tuple[Entrant, ...]:
    """Seat ``s`` gets the table's ``(s + rotation) % t``-th member."""
    t = len(table)
    return tuple(table[(s + rotation) % t] for s in range(t))


def _rotating_schedule(
    tables: list[tuple[Entrant, ...]], size: int, games: int, seed: int
) -> list[ScheduledGame]:
    seat_counts: dict[Entrant, list[int]] = {}
    full = games - games % size
    out: list[ScheduledGame] = []
    for game in range(games):
        for table in tables:
            if game < full:
                rotation = game % size
            else:
                rotation = _least_repeated(table, seat_counts, start=game % size)
            players = seating(table, rotation)
            for s, player in enumerate(players):
                seat_counts.setdefault(player, [0] * size)[s] += 1
            index = len(out)
            out.append(ScheduledGame(index, players, index, game_seed(seed, index)))
    return out


def _least_repeated(
    table: tuple[Entrant, ...], seat_counts: dict[Entrant, list[int]], *, start: int
) -> int:
    """The rotation whose seats the members have had least often (ties: from ``start`` on)."""
    size = len(table)
    best, best_cost = start, None
    for step in range(size):
        rotation = (start + step) % size
        counts = [seat_counts.get(p, [0] * size)[s] for s, p in enumerate(seating(table, rotation))]
        cost = (max(counts), sum(counts))
        if best_cost is None or cost < best_cost:
            best, best_cost = rotation, cost
    return best


def _duplicate_schedule(
    tables: list[tuple[Entrant, ...]], size: int, deals: int, seed: int
) -> list[ScheduledGame]:
    out: list[ScheduledGame] = []
    deal = 0
    for _ in range(deals):
        for table in tables:
            deal_seed = game_seed(seed, deal)
            for rotation in range(size):
                index = len(out)
                out.append(ScheduledGame(index, seating(table, rotation), deal, deal_seed))
            deal += 1
    return out


def _greedy_partition(
    playing: list[Entrant], size: int, met: dict[frozenset[Entrant], int]
) -> list[tuple[Entrant, ...]]:
    """Tables filled one at a time: each next member is the one who has met the members
    already seated least often (ties: the earlier in the seeded order ``playing``)."""
    remaining = list(playing)
    groups = []
    while remaining:
        group = [remaining.pop(0)]
        while len(group) < size:
            pick = min(
                range(len(remaining)),
                key=lambda i: sum(met.get(frozenset((remaining[i], m)), 0) for m in group),
            )
            group.append(remaining.pop(pick))
        groups.append(tuple(group))
    return groups


def balanced_tables(
    entrants: Sequence[Entrant], *, table_size: int, tables: int, seed: int
) -> list[tuple[Entrant, ...]]:
    """About ``tables`` tables (whole rounds, at least one) drawn when there are too many
    combinations to play them all.

    Built round by round. In a round every entrant plays once, except that when the table size
    does not divide the field the ``n % t`` entrants who have played most so far sit out (ties
    broken by a seeded draw); so every entrant plays the same number of tables, or one fewer.
    The round's tables are filled greedily, each next member the one who has met the members
    already seated least often, from ``_CANDIDATES`` seeded orders; the partition whose pairs
    have met least so far (smallest sum of squared meeting counts) is kept. That spreads the
    meetings of every pair evenly (not perfectly: see the tests for the spreads checked). Each
    table lists its members in entrant order; seats are then rotated as usual.
    """
    per_round = len(entrants) // table_size
    rounds = max(1, round(tables / per_round))
    rng = random.Random(game_seed(seed, -1))
    played = dict.fromkeys(entrants, 0)
    met: dict[frozenset[Entrant], int] = {}
    order = {entrant: i for i, entrant in enumerate(entrants)}
    out: list[tuple[Entrant, ...]] = []
    for _ in range(rounds):
        shuffled = list(entrants)
        rng.shuffle(shuffled)
        shuffled.sort(key=lambda e: played[e])  # stable: the seeded draw breaks ties
        playing = shuffled[: per_round * table_size]
        best: list[tuple[Entrant, ...]] = []
        best_cost = -1
        for _ in range(_CANDIDATES):
            rng.shuffle(playing)
            groups = _greedy_partition(playing, table_size, met)
            cost = sum(
                (met.get(frozenset(pair), 0) + 1) ** 2
                for group in groups
                for pair in combinations(group, 2)
            )
            if best_cost < 0 or cost < best_cost:
                best, best_cost = groups, cost
        best = [tuple(sorted(group, key=order.__getitem__)) for group in best]
        for group in best:
            for player in group:
                played[player] += 1
            for pair in combinations(group, 2):
                key = frozenset(pair)
                met[key] = met.get(key, 0) + 1
        out.extend(best)
    return out
