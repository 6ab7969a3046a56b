"""Round-robin schedules: pairings, seat balance, duplicate deals, seeds, balanced subsets."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.schedule import (
    ScheduledGame,
    ScheduleError,
    balanced_tables,
    game_seed,
    games_count,
    round_robin,
)

PEOPLE = ["alice", "bob", "charlie", "dave", "erin", "frank"]


def seat_counts(schedule: list[ScheduledGame], size: int) -> dict[object, list[int]]:
    counts: dict[object, list[int]] = {}
    for game in schedule:
        for seat, player in enumerate(game.players):
            counts.setdefault(player, [0] * size)[seat] += 1
    return counts


def test_every_pair_plays_the_set_number_of_games() -> None:
    schedule = round_robin(PEOPLE[:5], seed=1, games_per_pairing=4)
    met = Counter(frozenset(game.players) for game in schedule)
    assert len(schedule) == math.comb(5, 2) * 4 == 40
    assert set(met) == {frozenset(pair) for pair in combinations(PEOPLE[:5], 2)}
    assert set(met.values()) == {4}


def test_two_seats_each_entrant_sits_in_each_seat_equally_often() -> None:
    schedule = round_robin(PEOPLE[:5], seed=1, games_per_pairing=2)
    # 4 opponents x 2 games = 8 games each: 4 in seat 0 and 4 in seat 1.
    assert set(map(tuple, seat_counts(schedule, 2).values())) == {(4, 4)}


@pytest.mark.parametrize("entrants", range(2, 11))
@pytest.mark.parametrize("games", [1, 2, 3])
def test_two_seats_are_balanced_whenever_the_counts_allow(entrants: int, games: int) -> None:
    # Each entrant plays (entrants - 1) * games games: an even count splits exactly, an odd
    # one as near as can be.
    schedule = round_robin(list(range(entrants)), seed=3, games_per_pairing=games)
    allowed = 0 if (entrants - 1) * games % 2 == 0 else 1
    for first, second in seat_counts(schedule, 2).values():
        assert abs(first - second) == allowed


@pytest.mark.parametrize(("entrants", "size"), [(5, 3), (6, 4), (4, 4), (7, 3)])
def test_bigger_tables_seat_everyone_everywhere_equally_when_games_are_a_multiple(
    entrants: int, size: int
) -> None:
    schedule = round_robin(list(range(entrants)), seed=2, table_size=size, games_per_pairing=size)
    assert len(schedule) == math.comb(entrants, size) * size
    tables = Counter(frozenset(game.players) for game in schedule)
    assert len(tables) == math.comb(entrants, size)
    assert set(tables.values()) == {size}
    for counts in seat_counts(schedule, size).values():
        assert len(set(counts)) == 1  # the same count in every seat


def test_at_three_seats_the_second_cycle_plays_the_first_the_other_way_round() -> None:
    schedule = round_robin(["alice", "bob", "charlie"], seed=2, table_size=3, games_per_pairing=6)
    assert [game.players for game in schedule] == [
        ("alice", "bob", "charlie"),  # one cyclic order, rotated round the seats
        ("bob", "charlie", "alice"),
        ("charlie", "alice", "bob"),
        ("alice", "charlie", "bob"),  # then the other
        ("charlie", "bob", "alice"),
        ("bob", "alice", "charlie"),
    ]


def test_games_are_listed_pass_by_pass_over_the_tables() -> None:
    schedule = round_robin(PEOPLE[:4], seed=1, games_per_pairing=2)
    first_pass = {frozenset(game.players) for game in schedule[:6]}
    assert len(first_pass) == 6  # every pair once before any pair twice
    assert [game.index for game in schedule] == list(range(12))


def test_duplicate_deals_replay_each_deal_in_every_seating() -> None:
    schedule = round_robin(
        PEOPLE[:4], seed=9, table_size=3, games_per_pairing=6, duplicate_deals=True
    )
    # 4 tables of three, 6 games each = 2 deals of 3 seatings each.
    assert len(schedule) == 4 * 6
    by_deal: dict[int, list[ScheduledGame]] = {}
    for game in schedule:
        by_deal.setdefault(game.deal, []).append(game)
    assert len(by_deal) == 8
    for games in by_deal.values():
        assert len({game.seed for game in games}) == 1
        assert len({frozenset(game.players) for game in games}) == 1
        # Every member holds every seat (so every dealt hand) once in the deal.
        for seat in range(3):
            assert len({game.players[seat] for game in games}) == 3
    assert len({game.seed for game in schedule}) == 8


def test_two_seat_duplicate_deals_swap_the_seats_over_one_seed() -> None:
    schedule = round_robin(["alice", "bob"], seed=4, games_per_pairing=2, duplicate_deals=True)
    assert [game.players for game in schedule] == [("alice", "bob"), ("bob", "alice")]
    assert schedule[0].seed == schedule[1].seed == game_seed(4, 0)


def test_it_rejects_duplicate_deals_that_cannot_seat_everyone_equally() -> None:
    with pytest.raises(ScheduleError, match="multiple of the table size"):
        round_robin(PEOPLE, seed=1, table_size=3, games_per_pairing=4, duplicate_deals=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table_size": 11}, "between 2 and 10"),
        ({"table_size": 1}, "between 2 and 10"),
        ({"table_size": 7}, "at least 7 entrants"),
        ({"games_per_pairing": 0}, "at least one game"),
    ],
)
def test_it_rejects_impossible_tournaments(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        round_robin(PEOPLE, seed=1, **kwargs)


def test_it_rejects_an_entrant_listed_twice() -> None:
    with pytest.raises(ScheduleError, match="twice"):
        round_robin(["alice", "bob", "alice"], seed=1)


def test_seeds_are_deterministic_and_distinct() -> None:
    first = round_robin(PEOPLE, seed=2026, table_size=3, games_per_pairing=3)
    again = round_robin(PEOPLE, seed=2026, table_size=3, games_per_pairing=3)
    other = round_robin(PEOPLE, seed=2027, table_size=3, games_per_pairing=3)
    assert first == again
    seeds = [game.seed for game in first]
    assert len(set(seeds)) == len(seeds)
    assert not set(seeds) & {game.seed for game in other}
    assert all(0 <= seed < 2**63 for seed in seeds)  # fits the games' signed 64-bit column


@settings(max_examples=100, deadline=None, derandomize=True)
@given(seed=st.integers(-(2**70), 2**70), deal=st.integers(0, 10**6))
def test_a_game_seed_is_a_63_bit_function_of_the_tournament_seed_and_deal(
    seed: int, deal: int
) -> None:
    value = game_seed(seed, deal)
    assert value == game_seed(seed, deal)
    assert 0 <= value < 2**63
    assert value != game_seed(seed, deal + 1)


def test_too_many_combinations_draw_a_balanced_subset() -> None:
    # C(20, 4) = 4845 tables would be too many with max_tables=100: 20 rounds of 5 tables.
    entrants = list(range(20))
    schedule = round_robin(entrants, seed=5, table_size=4, games_per_pairing=4, max_tables=100)
    tables = Counter(frozenset(game.players) for game in schedule)
    assert len(schedule) == 100 * 4
    assert sum(tables.values()) == 400
    # Every entrant plays the same number of games, in every seat equally often.
    for counts in seat_counts(schedule, 4).values():
        assert counts == [20, 20, 20, 20]


@pytest.mark.parametrize(
    ("entrants", "size", "tables", "pair_spread"),
    [(20, 4, 100, 2), (13, 4, 60, 2), (12, 3, 200, 2), (30, 5, 300, 2)],
)
def test_a_balanced_subset_spreads_games_and_meetings_evenly(
    entrants: int, size: int, tables: int, pair_spread: int
) -> None:
    drawn = balanced_tables(list(range(entrants)), table_size=size, tables=tables, seed=9)
    assert len(drawn) == tables
    played = Counter(player for table in drawn for player in table)
    assert len(played) == entrants
    assert max(played.values()) - min(played.values()) == (0 if entrants % size == 0 else 1)
    met = Counter(frozenset(pair) for table in drawn for pair in combinations(table, 2))
    meetings = [met[frozenset(pair)] for pair in combinations(range(entrants), 2)]
    assert min(meetings) >= 1  # everyone meets everyone at least once
    assert max(meetings) - min(meetings) <= pair_spread


@pytest.mark.parametrize("entrants", range(3, 9))
@pytest.mark.parametrize("size", [3, 4])
@pytest.mark.parametrize("games", [1, 2, 5])
def test_leftover_games_at_bigger_tables_are_only_near_balanced(
    entrants: int, size: int, games: int
) -> None:
    # Games beyond whole rotation cycles are seated greedily: near, not exactly, balanced.
    # This pins the spread measured for these fields (docs/ratings.md says to prefer a multiple).
    if entrants < size:
        return
    schedule = round_robin(list(range(entrants)), seed=1, table_size=size, games_per_pairing=games)
    for counts in seat_counts(schedule, size).values():
        assert max(counts) - min(counts) <= 3


# --- who sits right after whom --------------------------------------------------------------
# In Uno the next player takes your Skips, Draw Twos and Wild Draw Fours, so a schedule that
# always seated b right after a (never a after b) would favour one of them by entry order.


def sits_after(schedule: list[ScheduledGame]) -> Counter[tuple[object, object]]:
    """(a, b): the games in which b sat right after a (seat order, the last seat before seat 0)."""
    after: Counter[tuple[object, object]] = Counter()
    for game in schedule:
        for seat, player in enumerate(game.players):
            after[player, game.players[(seat + 1) % len(game.players)]] += 1
    return after


def by_table(schedule: list[ScheduledGame]) -> dict[frozenset[object], list[ScheduledGame]]:
    tables: dict[frozenset[object], list[ScheduledGame]] = {}
    for game in schedule:
        tables.setdefault(frozenset(game.players), []).append(game)
    return tables


def assert_after_is_symmetric_at_every_table(schedule: list[ScheduledGame]) -> None:
    for table, games in by_table(schedule).items():
        after = sits_after(games)
        for a, b in combinations(table, 2):
            assert after[a, b] == after[b, a], (a, b, after[a, b], after[b, a])


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize(("entrants", "games"), [(3, 6), (5, 6), (6, 6), (6, 12), (7, 18)])
def test_at_three_seats_each_bot_sits_after_each_other_equally_often(
    entrants: int, games: int, duplicate: bool
) -> None:
    # Two cycles of rotations per table: the second plays the first's cyclic order backwards.
    schedule = round_robin(
        list(range(entrants)), seed=entrants, table_size=3, games_per_pairing=games,
        duplicate_deals=duplicate,
    )
    assert_after_is_symmetric_at_every_table(schedule)
    after = sits_after(schedule)
    # At three seats everyone at the table is a neighbour: each ordered pair the same count.
    assert set(after.values()) == {games // 2 * (entrants - 2)}


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize(
    ("entrants", "size", "games"),
    [(4, 4, 8), (6, 4, 8), (5, 4, 16), (5, 5, 10), (7, 5, 10), (6, 5, 20), (8, 6, 12)],
)
def test_at_four_to_six_seats_each_bot_sits_after_each_other_equally_often(
    entrants: int, size: int, games: int, duplicate: bool
) -> None:
    schedule = round_robin(
        list(range(entrants)), seed=7, table_size=size, games_per_pairing=games,
        duplicate_deals=duplicate,
    )
    assert_after_is_symmetric_at_every_table(schedule)
    after = sits_after(schedule)
    assert all(after[a, b] == after[b, a] for a, b in combinations(range(entrants), 2))


def test_six_bots_at_three_seats_no_longer_follow_one_another_by_entry_order() -> None:
    # The reviewer's field: with the cyclic order fixed by entry order, bot 6 sat right after
    # bot 5 in 12 games and bot 5 after bot 6 in none. One cycle per table cannot be balanced
    # table by table; the tables' cyclic orders are chosen to balance the tournament.
    for seed in range(10):
        after = sits_after(
            round_robin([1, 2, 3, 4, 5, 6], seed=seed, table_size=3, games_per_pairing=3)
        )
        assert (after[5, 6], after[6, 5]) == (6, 6)
        assert set(after.values()) == {6}


@pytest.mark.parametrize(
    ("entrants", "size", "games", "apart"),
    [(5, 3, 3, 3), (7, 3, 9, 3), (6, 3, 9, 0), (8, 3, 3, 0), (6, 4, 4, 4), (8, 4, 12, 8),
     (7, 5, 5, 5), (7, 5, 15, 5)],
)
def test_an_odd_number_of_cycles_leaves_the_tournament_nearly_balanced(
    entrants: int, size: int, games: int, apart: int
) -> None:
    # The last cycle of each table is unpaired; its cyclic orders are chosen to even out the
    # tournament's counts. Pinned: the spread measured over seeds 0-9 (docs/ratings.md). With
    # an odd number of entrants at three seats each pair shares an odd number of tables, so
    # one cycle's games (3) apart is the least possible.
    for seed in range(10):
        after = sits_after(
            round_robin(list(range(entrants)), seed=seed, table_size=size, games_per_pairing=games)
        )
        pairs = combinations(range(entrants), 2)
        assert max(abs(after[a, b] - after[b, a]) for a, b in pairs) <= apart


def test_at_four_seats_six_cycles_play_each_cyclic_order_once() -> None:
    schedule = round_robin(list(range(5)), seed=3, table_size=4, games_per_pairing=24)
    for table, games in by_table(schedule).items():
        orders = set()
        for cycle in range(6):
            first = games[cycle * 4].players
            start = first.index(min(table))
            orders.add(first[start:] + first[:start])
            # The cycle's 4 games are the rotations of its first.
            assert {g.players for g in games[cycle * 4 : cycle * 4 + 4]} == {
                first[r:] + first[:r] for r in range(4)
            }
        assert len(orders) == 6 == math.factorial(3)
        # So b sits right after a in 2 of the 6 cyclic orders, 4 games each, for every a, b.
        after = sits_after(games)
        assert {after[a, b] for a, b in combinations(table, 2)} == {8}


def test_at_five_seats_four_cycles_seat_every_two_members_side_by_side_equally() -> None:
    schedule = round_robin(list(range(6)), seed=3, table_size=5, games_per_pairing=20)
    for table, games in by_table(schedule).items():
        after = sits_after(games)
        # Each cycle seats 5 of the 10 pairs side by side: 2 cycles of 5 games each.
        assert {after[a, b] + after[b, a] for a, b in combinations(table, 2)} == {10}
        assert {after[a, b] for a, b in combinations(table, 2)} == {5}


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize(("entrants", "size", "games"), [(6, 3, 6), (6, 4, 24), (7, 5, 10)])
def test_varying_the_cyclic_order_keeps_every_seat_equally_shared(
    entrants: int, size: int, games: int, duplicate: bool
) -> None:
    schedule = round_robin(
        list(range(entrants)), seed=1, table_size=size, games_per_pairing=games,
        duplicate_deals=duplicate,
    )
    for counts in seat_counts(schedule, size).values():
        assert len(set(counts)) == 1


@pytest.mark.parametrize("size", [3, 4, 5])
def test_the_seatings_of_a_deal_share_its_seed_and_its_cyclic_order(size: int) -> None:
    schedule = round_robin(
        list(range(size + 2)), seed=11, table_size=size, games_per_pairing=4 * size,
        duplicate_deals=True,
    )
    by_deal: dict[int, list[ScheduledGame]] = {}
    for game in schedule:
        by_deal.setdefault(game.deal, []).append(game)
    orders_per_table: dict[frozenset[object], set[tuple[object, ...]]] = {}
    for deal, games in by_deal.items():
        assert len(games) == size
        assert {game.seed for game in games} == {game_seed(11, deal)}
        first = games[0].players
        # Every seating of the deal is a rotation of the first: the same cyclic order, so
        # each member holds each dealt hand once with the same neighbours on either side.
        assert {game.players for game in games} == {first[r:] + first[:r] for r in range(size)}
        start = first.index(min(first))
        orders_per_table.setdefault(frozenset(first), set()).add(first[start:] + first[:start])
    # Over its four deals, a table is seated in more than one cyclic order.
    assert all(len(orders) >= 2 for orders in orders_per_table.values())


# Digests of the 2-seat schedules as played before the cyclic order varied (commit acc8d0f):
# players, deal and seed of every game. Two seats have a single cyclic order, so they must not
# move: existing 2-seat tournaments and figures measured with them stay reproducible.
TWO_SEAT_DIGESTS = {
    (2, 1, False, None, 1): "58de0f0bf00feaa5",
    (2, 1, False, None, 2026): "625c6cc7b7150732",
    (5, 3, False, None, 1): "f42a445ce309b358",
    (5, 3, False, None, 2026): "8ab8256af26e7d15",
    (6, 4, True, None, 1): "3f190624bb19c98d",
    (6, 4, True, None, 2026): "240bc2c82d91b847",
    (7, 2, False, None, 1): "95ea03fee1c072fe",
    (7, 2, False, None, 2026): "9d87433b5ba5ab42",
    (4, 5, False, None, 1): "9dc5186de5826271",
    (4, 5, False, None, 2026): "224f97347094d2fb",
    (30, 2, False, 100, 1): "4e1cd3adf91b5da1",
    (30, 2, True, 100, 1): "2b377e43a16fc2ab",
    (30, 2, False, 100, 2026): "e97cf28d1fca6136",
    (30, 2, True, 100, 2026): "735662a285aa5019",
}


@pytest.mark.parametrize(("case", "digest"), TWO_SEAT_DIGESTS.items())
def test_two_seat_schedules_are_the_ones_played_before_the_cyclic_order_varied(
    case: tuple[int, int, bool, int | None, int], digest: str
) -> None:
    entrants, games, duplicate, max_tables, seed = case
    extra = {} if max_tables is None else {"max_tables": max_tables}
    schedule = round_robin(
        list(range(entrants)), seed=seed, games_per_pairing=games, duplicate_deals=duplicate,
        **extra,
    )
    rows = [[list(game.players), game.deal, game.seed] for game in schedule]
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16] == digest


@pytest.mark.parametrize(("entrants", "size", "games", "duplicate"), [
    (2, 2, 1, False), (6, 2, 6, False), (7, 3, 3, False), (7, 3, 3, True), (10, 4, 2, False),
    (16, 5, 1, False), (20, 10, 2, False), (23, 6, 6, True), (40, 2, 1, False),
])
def test_the_games_count_is_what_the_schedule_holds_without_building_it(
    entrants: int, size: int, games: int, duplicate: bool
) -> None:
    planned = round_robin(list(range(entrants)), seed=7, table_size=size,
                          games_per_pairing=games, duplicate_deals=duplicate)
    assert games_count(entrants, table_size=size, games_per_pairing=games) == len(planned)
