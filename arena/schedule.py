"""Round-robin schedules for tournaments: who sits where in which game, with which seed.

Pure Python, no Django. The tournament services turn each ``ScheduledGame`` into a real game
with ``options.players == table_size``, seating ``players`` in seat order and dealing with
``seed``, so a tournament is replayed exactly from its own seed.

Tables: every combination of ``table_size`` entrants is a table (every pair, with two seats).
When there would be more than ``max_tables`` combinations, a balanced subset is drawn instead
(see ``balanced_tables``).

Seats: each table plays ``games_per_pairing`` games, in cycles of ``t`` games. A cycle seats
the table in one cyclic order (who sits right after whom, seat ``t - 1`` before seat 0) and
rotates it round the seats: rotation ``r`` puts the order's ``(s + r) % t``-th member in seat
``s``, so a cycle seats every member once in every seat. Each entrant therefore sits in each
seat exactly equally often when ``games_per_pairing`` is a multiple of the table size.

Cyclic orders (``_Neighbours``): two seats have only one, the table as listed, so 2-seat
schedules are what they always were. At bigger tables each odd cycle of a table plays the cycle
before it the other way round: over every two cycles, for every two members ``a`` and ``b``,
``b`` sits right after ``a`` exactly as often as ``a`` after ``b`` (in Uno the next player takes
your Skips and Draw cards, so this must not follow the entry order). Each even cycle takes a
new cyclic order: first one that seats side by side the members who have sat side by side
least in this table (at 4 seats, 6 cycles play all 6 cyclic orders; at 5 seats, 4 cycles seat
every two members side by side equally), then, of those, one that puts after each member the
members who have sat after it least over the tournament (so that a table's last cycle, when the
number of cycles is odd, evens out the tournament's counts: this is put first for that cycle).
Ties go to a seeded order, so the choice is deterministic from the tournament's seed.

Left-over games (``games_per_pairing % t``): each takes, of every cyclic order and rotation,
the seating that least repeats seats the members already had over the whole tournament, then
as above. So seats are as near equal as that greedy choice gets (within 3 in the fields the
tests check).

Duplicate deals: each deal is one cycle: played ``t`` times, once in each rotation of one
cyclic order, with the same seed, so every member holds every hand of the deal once with the
same neighbours on either side, and the luck of the cards cancels out; ``games_per_pairing``
must then be a multiple of the table size.

Order: the games are numbered pass by pass (the first game, or deal, of every table, then the
second...). They are played table by table: a table's games are one match, and a worker begins
its next match's games only once the current one can begin no more (arena.runner), so a
tournament stopped part-way has played some tables in full, the few in play in part, and the
others not at all.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

MIN_TABLE = 2
MAX_TABLE = 10
MAX_TABLES = 1000  # more combinations than this and a balanced subset is drawn
_CANDIDATES = 16  # seeded partitions tried per round of a balanced subset
_ALL_ORDERS = 5  # up to this many seats every cyclic order of a table is a candidate (24 at 5)
_WALKS = 12  # else this many seeded walks round the table, and their reverses

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


def games_count(entrants: int, *, table_size: int, games_per_pairing: int,
                max_tables: int = MAX_TABLES) -> int:
    """How many games ``round_robin`` schedules for ``entrants`` entrants, without scheduling
    them: a schedule too big to take is refused before it is built (20 bots at tables of 10
    with 1,000 games a table took 30 s and 300 MB to be refused). Duplicate deals play
    ``games_per_pairing`` games a table too (deals x seatings)."""
    combos = math.comb(entrants, table_size)
    if combos <= max_tables:
        return combos * games_per_pairing
    per_round = entrants // table_size  # balanced_tables: whole rounds of this many tables
    return max(1, round(max_tables / per_round)) * per_round * games_per_pairing


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


def seating(order: tuple[Entrant, ...], rotation: int) -> tuple[Entrant, ...]:
    """Seat ``s`` gets the ``(s + rotation) % t``-th member of the cyclic order ``order``."""
    t = len(order)
    return tuple(order[(s + rotation) % t] for s in range(t))


def _reversed(order: tuple[Entrant, ...]) -> tuple[Entrant, ...]:
    """The same cyclic order played the other way round, listed from the same first member."""
    return order[:1] + order[:0:-1]


class _Neighbours:
    """Chooses each table's cyclic order (who sits right after whom), keeping count of who has
    sat after and beside whom so far. Two seats have one cyclic order, the table as listed."""

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.rng = random.Random(game_seed(seed, -2))
        self.after: dict[tuple[Entrant, Entrant], int] = {}  # (a, b): games b sat right after a
        self.beside: dict[frozenset[Entrant], int] = {}  # games the two sat side by side
        self.within: dict[tuple[Entrant, ...], dict[frozenset[Entrant], int]] = {}  # by table

    def cycle(
        self, table: tuple[Entrant, ...], cycle: int, cycles: int, previous: tuple[Entrant, ...]
    ) -> tuple[Entrant, ...]:
        """The cyclic order of the table's ``cycle``-th cycle of rotations (of ``cycles``),
        counted as ``size`` games. ``previous``: the order of its cycle before (if any).

        An odd cycle plays the one before it the other way round. An even cycle takes the
        candidate (``_candidates``) whose neighbours (``_costs``) have sat side by side least
        in this table, then whose each member has sat right after the one before it least
        often compared with the other way round, over the tournament, then whose neighbours
        have sat side by side least over the tournament; the last cycle, when it is even (so
        unpaired), puts the second rule first. Ties: the seeded order of the candidates."""
        if self.size == MIN_TABLE:
            order = table
        elif cycle % 2:
            order = _reversed(previous)
        else:
            last = cycle == cycles - 1

            def cost(order: tuple[Entrant, ...]) -> tuple[int, int, int]:
                here, balance, there = self._costs(table, order)
                return (balance, here, there) if last else (here, balance, there)

            order = min(self._candidates(table), key=cost)
        self._count(table, order, self.size)
        return order

    def leftover(
        self, table: tuple[Entrant, ...], seat_counts: dict[Entrant, list[int]], *, start: int
    ) -> tuple[Entrant, ...]:
        """The seating of one game beyond the table's whole cycles: of every candidate cyclic
        order in every rotation, the one whose seats the members have had least often (the
        highest count, then the sum), then by ``_costs``, the balance of who sits after whom
        first. Ties: the candidates' order, then rotations from ``start`` on (at two seats,
        with one order, the rotations alone: as before cyclic orders varied)."""
        size = self.size
        had = {member: seat_counts.get(member, [0] * size) for member in table}
        fewest: list[tuple[Entrant, ...]] = []  # the seatings of the fewest repeats, in order
        fewest_cost = None
        for order in self._candidates(table) if size > MIN_TABLE else [table]:
            rows = [had[member] for member in order]
            for step in range(size):
                rotation = (start + step) % size
                counts = [rows[(s + rotation) % size][s] for s in range(size)]
                cost = (max(counts), sum(counts))
                if fewest_cost is None or cost < fewest_cost:
                    fewest, fewest_cost = [], cost
                if cost == fewest_cost:
                    fewest.append(seating(order, rotation))

        def neighbours_cost(players: tuple[Entrant, ...]) -> tuple[int, int, int]:
            here, balance, there = self._costs(table, players)
            return balance, here, there

        best = min(fewest, key=neighbours_cost) if len(fewest) > 1 else fewest[0]
        self._count(table, best, 1)
        return best

    def _costs(self, table: tuple[Entrant, ...], order: tuple[Entrant, ...]) -> tuple[int, ...]:
        """For ``order``'s neighbours, summed: the games they have sat side by side in this
        table; how many more games each has sat right after the one before it than the other
        way round, over the tournament; the games they have sat side by side there."""
        here = self.within.get(table, {})
        pairs = [(order[s], order[(s + 1) % len(order)]) for s in range(len(order))]
        sides = [frozenset(pair) for pair in pairs]
        return (
            sum(here.get(side, 0) for side in sides),
            sum(self.after.get((a, b), 0) - self.after.get((b, a), 0) for a, b in pairs),
            sum(self.beside.get(side, 0) for side in sides),
        )

    def _count(self, table: tuple[Entrant, ...], order: tuple[Entrant, ...], games: int) -> None:
        here = self.within.setdefault(table, {})
        for s in range(len(order)):
            a, b = order[s], order[(s + 1) % len(order)]
            side = frozenset((a, b))
            self.after[a, b] = self.after.get((a, b), 0) + games
            self.beside[side] = self.beside.get(side, 0) + games
            here[side] = here.get(side, 0) + games

    def _candidates(self, table: tuple[Entrant, ...]) -> list[tuple[Entrant, ...]]:
        """The cyclic orders of ``table`` to choose from (each listed from the table's first
        member), in a seeded order. Up to ``_ALL_ORDERS`` seats, all ``(t - 1)!`` of them.
        Beyond, ``_WALKS`` walks round the table and their reverses: each walk starts from a
        seeded member and goes on to the member who has sat beside the last one least in this
        table (ties: a seeded order)."""
        if len(table) <= _ALL_ORDERS:
            found = [table[:1] + rest for rest in permutations(table[1:])]
        else:
            here = self.within.get(table, {})
            found = []
            for _ in range(_WALKS):
                rest = self.rng.sample(table, len(table))
                walk = [rest.pop()]
                while rest:
                    step = min(rest, key=lambda m: here.get(frozenset((walk[-1], m)), 0))
                    rest.remove(step)
                    walk.append(step)
                first = walk.index(table[0])
                order = tuple(walk[first:] + walk[:first])
                found += [order, _reversed(order)]
        self.rng.shuffle(found)
        return found


def _rotating_schedule(
    tables: list[tuple[Entrant, ...]], size: int, games: int, seed: int
) -> list[ScheduledGame]:
    neighbours = _Neighbours(size, seed)
    orders = list(tables)  # each table's cyclic order in its current cycle
    seat_counts: dict[Entrant, list[int]] = {}
    cycles = games // size
    out: list[ScheduledGame] = []
    for game in range(games):
        cycle, rotation = divmod(game, size)
        for i, table in enumerate(tables):
            if cycle == cycles:
                players = neighbours.leftover(table, seat_counts, start=rotation)
            else:
                if rotation == 0:
                    orders[i] = neighbours.cycle(table, cycle, cycles, orders[i])
                players = seating(orders[i], rotation)
            for s, player in enumerate(players):
                seat_counts.setdefault(player, [0] * size)[s] += 1
            index = len(out)
            out.append(ScheduledGame(index, players, index, game_seed(seed, index)))
    return out


def _duplicate_schedule(
    tables: list[tuple[Entrant, ...]], size: int, deals: int, seed: int
) -> list[ScheduledGame]:
    neighbours = _Neighbours(size, seed)
    orders = list(tables)
    out: list[ScheduledGame] = []
    deal = 0
    for cycle in range(deals):
        for i, table in enumerate(tables):
            orders[i] = neighbours.cycle(table, cycle, deals, orders[i])
            deal_seed = game_seed(seed, deal)
            for rotation in range(size):
                index = len(out)
                out.append(ScheduledGame(index, seating(orders[i], rotation), deal, deal_seed))
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
    table lists its members in entrant order; seats are then chosen as usual.
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
