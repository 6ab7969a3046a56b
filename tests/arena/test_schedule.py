"""Round-robin schedules: pairings, seat balance, duplicate deals, seeds, balanced subsets."""

from __future__ import annotations

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


def test_a_three_seat_rotation_keeps_each_tables_cyclic_order() -> None:
    schedule = round_robin(["alice", "bob", "charlie"], seed=2, table_size=3, games_per_pairing=3)
    assert [game.players for game in schedule] == [
        ("alice", "bob", "charlie"),
        ("bob", "charlie", "alice"),
        ("charlie", "alice", "bob"),
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
