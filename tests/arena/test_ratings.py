"""Elo per rule set, Bradley-Terry with intervals, standings: checked against hand values."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import (
    BTRating,
    EloLadder,
    GameResult,
    bradley_terry,
    canonical_rule_set,
    elo_ratings,
    expected_score,
    pairwise,
    standings,
)
from arena.ratings.rule_sets import rule_set_named
from games.uno import OptionsError

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True)


def two_seat(a: str, b: str, *, winner: int | None, game_id: object = None) -> GameResult:
    left = (0, 0) if winner is None else ((0, 30) if winner == 0 else (30, 0))
    return GameResult(players=(a, b), winner=winner, points_left=left, game_id=game_id)


# --- finishing order and the pairwise expansion ---------------------------------------------
def test_the_winner_finishes_first_then_fewest_points_left_then_forfeits() -> None:
    game = GameResult(
        players=("alice", "bob", "charlie", "dave"),
        winner=2,
        points_left=(40, 12, 0, 5),
        forfeited=frozenset({3}),
    )
    # charlie won; bob (12) beats alice (40); dave forfeited, so last despite holding only 5.
    assert game.places() == (2, 1, 0, 3)


def test_seats_with_equal_points_left_share_a_place() -> None:
    game = GameResult(players=("alice", "bob", "charlie"), winner=0, points_left=(0, 20, 20))
    assert game.places() == (0, 1, 1)


def test_a_three_seat_game_expands_into_three_pairwise_results() -> None:
    game = GameResult(players=("alice", "bob", "charlie"), winner=1, points_left=(9, 0, 20))
    # Order: bob (winner), alice (9 left), charlie (20 left).
    assert [(p.a, p.b, p.score) for p in pairwise(game)] == [
        ("alice", "bob", 0.0),
        ("alice", "charlie", 1.0),
        ("bob", "charlie", 1.0),
    ]


def test_it_rejects_an_entrant_seated_twice() -> None:
    with pytest.raises(ValueError, match="at most once"):
        GameResult(players=("alice", "alice"), winner=0, points_left=(0, 3))


def test_it_rejects_a_winner_that_is_not_a_seat_number() -> None:
    with pytest.raises(ValueError, match="winner"):
        GameResult(players=("alice", "bob"), winner=True, points_left=(0, 3))  # type: ignore[arg-type]


# --- Elo -------------------------------------------------------------------------------------
def test_elo_two_seats_matches_the_hand_computation() -> None:
    # Game 1, both at 1500: expected 0.5 each; alice wins: 1500 + 16 * (1 - 0.5) = 1508,
    # bob 1500 - 8 = 1492.
    # Game 2, bob (1492) beats alice (1508): expected(bob) = 1 / (1 + 10 ** (16 / 400))
    # = 1 / (1 + 1.0964782) = 0.4769904; bob + 16 * (1 - 0.4769904) = 1492 + 8.3681534
    # = 1500.3681534, alice 1508 - 8.3681534 = 1499.6318466.
    games = [two_seat("alice", "bob", winner=0, game_id=1), two_seat("alice", "bob", winner=1)]
    ratings, history = elo_ratings(games, start=1500, k=16)
    assert ratings["alice"] == pytest.approx(1499.6318466, abs=1e-6)
    assert ratings["bob"] == pytest.approx(1500.3681534, abs=1e-6)
    assert [(h.entrant, h.game_id, h.before, h.after) for h in history[:2]] == [
        ("alice", 1, 1500, 1508),
        ("bob", 1, 1500, 1492),
    ]


def test_a_draw_between_equals_changes_nothing() -> None:
    ratings, _ = elo_ratings([two_seat("alice", "bob", winner=None)])
    assert ratings == {"alice": 1500, "bob": 1500}


def test_elo_multi_seat_uses_k_over_n_minus_one_per_pair_from_pre_game_ratings() -> None:
    # Three seats at 1500: finishing alice, bob, charlie. K / (n - 1) = 16 / 2 = 8 per pair,
    # every expectation 0.5. alice: +4 (vs bob) +4 (vs charlie) = +8; bob: -4 + 4 = 0;
    # charlie: -4 - 4 = -8.
    game = GameResult(players=("charlie", "alice", "bob"), winner=1, points_left=(30, 0, 10))
    ratings, _ = elo_ratings([game], start=1500, k=16)
    assert ratings == {"alice": 1508, "bob": 1500, "charlie": 1492}


def test_elo_multi_seat_with_unequal_ratings_by_hand() -> None:
    # alice 1600, bob 1500, charlie 1400; bob wins, alice holds 10, charlie 20. K = 16, so 8
    # per pair. 10 ** (-100/400) = 0.5623413, so E(alice vs bob) = 1 / 1.5623413 = 0.6400650;
    # 10 ** (-200/400) = 0.3162278, so E(alice vs charlie) = 1 / 1.3162278 = 0.7597469;
    # E(bob vs charlie) = 0.6400650 as for alice vs bob.
    # alice: 8 * (0 - 0.6400650) + 8 * (1 - 0.7597469) = -5.1205200 + 1.9220246 = -3.1984954
    # bob:   8 * (1 - 0.3599350) + 8 * (1 - 0.6400650) = 5.1205200 + 2.8794800 = +8.0000000
    # charlie: 8 * (0 - 0.2402531) + 8 * (0 - 0.3599350) = -1.9220246 - 2.8794800 = -4.8015046
    ladder = EloLadder(k=16, ratings={"alice": 1600, "bob": 1500, "charlie": 1400})
    ladder.apply(GameResult(("alice", "bob", "charlie"), winner=1, points_left=(10, 0, 20)))
    assert ladder.ratings["alice"] == pytest.approx(1600 - 3.1984954, abs=1e-6)
    assert ladder.ratings["bob"] == pytest.approx(1508.0, abs=1e-6)
    assert ladder.ratings["charlie"] == pytest.approx(1400 - 4.8015046, abs=1e-6)


def test_the_same_games_in_the_same_order_give_the_same_ratings() -> None:
    games = [
        two_seat("alice", "bob", winner=0),
        GameResult(("bob", "charlie", "alice"), winner=2, points_left=(4, 9, 0)),
        two_seat("charlie", "alice", winner=0),
    ]
    assert elo_ratings(games) == elo_ratings(list(games))


def test_the_order_of_games_is_part_of_the_result() -> None:
    # Reversed, bob wins first (1508 / 1492) and alice then gains the 8.3681534: the mirror
    # image of the forward order, which is why the services fix the order.
    games = [two_seat("alice", "bob", winner=0), two_seat("alice", "bob", winner=1)]
    forward, _ = elo_ratings(games)
    backward, _ = elo_ratings(games[::-1])
    assert backward["alice"] == pytest.approx(forward["bob"])
    assert forward != backward


@SETTINGS
@given(
    ratings=st.lists(st.floats(800, 2400), min_size=2, max_size=10),
    data=st.data(),
)
def test_every_game_is_zero_sum(ratings: list[float], data: st.DataObject) -> None:
    n = len(ratings)
    left = data.draw(st.lists(st.integers(0, 200), min_size=n, max_size=n))
    winner = data.draw(st.none() | st.integers(0, n - 1))
    players = tuple(f"bot{i}" for i in range(n))
    ladder = EloLadder(ratings=dict(zip(players, ratings, strict=True)))
    changes = ladder.apply(GameResult(players, winner=winner, points_left=tuple(left)))
    assert sum(c.delta for c in changes) == pytest.approx(0, abs=1e-9)
    assert all(abs(c.delta) <= ladder.k + 1e-9 for c in changes)


def test_expected_scores_of_a_pair_add_up_to_one() -> None:
    assert expected_score(1700, 1500) + expected_score(1500, 1700) == pytest.approx(1)


# --- rule sets ---------------------------------------------------------------------------------
def test_the_default_rules_are_the_official_ladder_whatever_the_table_size() -> None:
    assert canonical_rule_set({}) == "official"
    assert canonical_rule_set({"players": 4, "stacking": False, "target_score": 500}) == "official"


def test_house_rules_are_named_sorted_and_stable() -> None:
    one = canonical_rule_set({"target_score": 200, "stacking": True, "jump_in": True})
    other = canonical_rule_set({"jump_in": True, "stacking": True, "target_score": 200})
    assert one == other == "jump_in,stacking,target_score=200"


def test_a_single_hand_has_no_target_score_in_its_name() -> None:
    # One hand is the whole game: the target is never reached, so it names no other ladder.
    assert canonical_rule_set({"single_hand": True, "target_score": 200}) == "single_hand"


def test_a_name_spelled_in_any_order_gives_the_canonical_name() -> None:
    assert rule_set_named("official") == "official"
    assert rule_set_named("target_score=200,stacking,jump_in") == (
        "jump_in,stacking,target_score=200")
    assert rule_set_named("deck_2018=false") == "official"
    for nonsense in ("nonsense", "stacking,stacking", "players=3", "stacking=yes",
                     "target_score=many", ""):
        with pytest.raises(ValueError):
            rule_set_named(nonsense)
    with pytest.raises(OptionsError):
        rule_set_named("target_score=0")


def test_it_rejects_options_the_engine_rejects() -> None:
    with pytest.raises(OptionsError):
        canonical_rule_set({"stacking": "yes"})
    with pytest.raises(OptionsError):
        canonical_rule_set({"no_such_rule": True})


# --- Bradley-Terry -----------------------------------------------------------------------------
def test_bradley_terry_without_prior_is_the_win_ratio() -> None:
    # Without a prior the MLE of two players is p_a / p_b = wins / losses = 3 / 1, so the
    # ratings differ by 400 * log10(3) = 190.8485 and sit 95.4243 either side of 1500.
    games = [two_seat("alice", "bob", winner=0)] * 3 + [two_seat("alice", "bob", winner=1)]
    rated = bradley_terry(games, resamples=0, prior=1e-9)
    assert rated["alice"].rating == pytest.approx(1500 + 95.4243, abs=1e-3)
    assert rated["bob"].rating == pytest.approx(1500 - 95.4243, abs=1e-3)


def test_bradley_terry_prior_is_one_virtual_draw_against_strength_one() -> None:
    # alice 3-1 against bob, plus one virtual draw each against an anchor of strength 1.
    # Likelihood equations (W_i = wins + 0.5):
    #   alice: 3.5 = 4 a / (a + b) + a / (a + 1);   bob: 1.5 = 4 b / (a + b) + b / (b + 1).
    # Try b = 1 / a = 1 / x: alice's becomes 4 x^2 / (x^2 + 1) + x / (x + 1) = 3.5 (and bob's
    # is then implied, the two add up to 5 = 4 + 1). Bisection gives x = 1.6071195
    # (x^2 = 2.5828330: 4 * 2.5828330 / 3.5828330 = 2.8835789, x / (x + 1) = 0.6164211,
    # total 3.5000000). Ratings: 1500 +/- 400 * log10(1.6071195) = 1500 +/- 82.4192690.
    games = [two_seat("alice", "bob", winner=0)] * 3 + [two_seat("alice", "bob", winner=1)]
    rated = bradley_terry(games, resamples=0)
    assert rated["alice"].rating == pytest.approx(1582.4192690, abs=1e-6)
    assert rated["bob"].rating == pytest.approx(1417.5807310, abs=1e-6)
    assert math.isnan(rated["alice"].low)


def test_a_rock_paper_scissors_cycle_rates_everyone_equal() -> None:
    games = [
        two_seat("alice", "bob", winner=0),
        two_seat("bob", "charlie", winner=0),
        two_seat("charlie", "alice", winner=0),
    ]
    rated = bradley_terry(games, resamples=0)
    assert [rated[e].rating for e in ("alice", "bob", "charlie")] == pytest.approx([1500] * 3)


def test_a_perfect_record_and_a_blank_one_get_finite_ratings_and_intervals() -> None:
    games = [two_seat("alice", "bob", winner=0) for _ in range(10)]
    games += [two_seat("charlie", "bob", winner=0) for _ in range(5)]
    games += [two_seat("alice", "charlie", winner=0) for _ in range(5)]
    rated = bradley_terry(games, resamples=200, seed=1)
    for line in rated.values():
        assert all(math.isfinite(v) for v in (line.rating, line.low, line.high))
        assert line.low <= line.rating <= line.high
    assert rated["alice"].rating > rated["charlie"].rating > rated["bob"].rating


def test_entrants_never_compared_still_share_one_scale() -> None:
    games = [two_seat("alice", "bob", winner=0), two_seat("charlie", "dave", winner=0)]
    rated = bradley_terry(games, entrants=["erin"], resamples=0)
    assert rated["alice"].rating == pytest.approx(rated["charlie"].rating)
    assert rated["erin"].games == 0 and math.isnan(rated["erin"].rating)
    played = [r.rating for r in rated.values() if r.games]
    assert sum(played) / 4 == pytest.approx(1500)


def test_two_three_seat_games_weigh_as_the_three_pairwise_games() -> None:
    # Each pair of a three-seat game weighs 1 / (3 - 1) = 1/2, so two games alice > bob >
    # charlie are the same evidence as one game of each pair.
    triple = GameResult(("alice", "bob", "charlie"), winner=0, points_left=(0, 5, 9))
    pairs = [
        two_seat("alice", "bob", winner=0),
        two_seat("alice", "charlie", winner=0),
        two_seat("bob", "charlie", winner=0),
    ]
    from_triples = bradley_terry([triple, triple], resamples=0)
    from_pairs = bradley_terry(pairs, resamples=0)
    for name in ("alice", "bob", "charlie"):
        assert from_triples[name].rating == pytest.approx(from_pairs[name].rating)


def test_the_same_games_and_seed_give_the_same_intervals() -> None:
    names = ["alice", "bob", "charlie", "dave"]
    games = [
        two_seat(names[i % 4], names[(i * 7 + 1) % 4 or 1], winner=int(i % 3 == 0))
        for i in range(60)
        if names[i % 4] != names[(i * 7 + 1) % 4 or 1]
    ]
    first = bradley_terry(games, resamples=300, seed=42)
    assert bradley_terry(games, resamples=300, seed=42) == first
    assert bradley_terry(games, resamples=300, seed=43) != first


def test_the_bootstrap_resamples_the_seatings_of_a_duplicate_deal_together() -> None:
    # Whoever sits in seat 0 wins, but in four deals of twenty alice wins both seatings: 24-16.
    # Deal by deal the seat's luck cancels, so resamples of whole deals vary only in how many
    # of those four they draw: a narrow interval. Resampled game by game, the same games give
    # a wide one.
    games = []
    for deal in range(20):
        games.append(GameResult(("alice", "bob"), winner=0, points_left=(0, 9), deal=deal))
        alice_again = deal < 4
        games.append(GameResult(("bob", "alice"), winner=1 if alice_again else 0,
                                points_left=(9, 0) if alice_again else (0, 9), deal=deal))
    by_deal = bradley_terry(games, resamples=200, seed=1)["alice"]
    loose = [dataclasses.replace(game, deal=None) for game in games]
    by_game = bradley_terry(loose, resamples=200, seed=1)["alice"]
    assert by_deal.rating == pytest.approx(by_game.rating)
    assert by_deal.low < by_deal.rating < by_deal.high
    assert by_game.high - by_game.low > 1.5 * (by_deal.high - by_deal.low)


def _no_interval(line: BTRating) -> bool:
    return math.isnan(line.low) and math.isnan(line.high)


def test_one_resampling_unit_gives_no_interval() -> None:
    # One game; or one duplicate deal, its two seatings resampled together.
    alone = bradley_terry([two_seat("alice", "bob", winner=0)], resamples=200, seed=1)
    deal = [GameResult(("alice", "bob"), winner=0, points_left=(0, 9), deal=7),
            GameResult(("bob", "alice"), winner=0, points_left=(0, 9), deal=7)]
    one_deal = bradley_terry(deal, resamples=200, seed=1)
    for rated in (alone, one_deal):
        assert all(_no_interval(line) for line in rated.values())
    assert alone["alice"].rating > 1500 and one_deal["alice"].rating == pytest.approx(1500)


def test_units_that_are_all_alike_give_no_interval() -> None:
    # Two bots, two games per pairing, both won by alice: every resample is the tournament.
    same = bradley_terry([two_seat("alice", "bob", winner=0)] * 2, resamples=200, seed=1)
    assert same["alice"].rating > 1600 and all(_no_interval(line) for line in same.values())
    # Twenty duplicate deals, each split 1-1 by the seat: every resample is 20 split deals.
    deals = []
    for deal in range(20):
        deals.append(GameResult(("alice", "bob"), winner=0, points_left=(0, 9), deal=deal))
        deals.append(GameResult(("bob", "alice"), winner=0, points_left=(0, 9), deal=deal))
    split = bradley_terry(deals, resamples=200, seed=1)
    assert all(_no_interval(line) for line in split.values())


def test_an_entrant_with_no_games_gets_no_rating_and_leaves_the_others_as_they_were() -> None:
    """A cancelled tournament's bot that never sat: the prior alone gave it the anchor's
    strength (1529.9 above two bots that played), and moved their centring."""
    games = [two_seat("alice", "bob", winner=0), two_seat("alice", "bob", winner=1),
             two_seat("alice", "bob", winner=0)]
    rated = bradley_terry(games, entrants=["alice", "bob", "carol"], resamples=200, seed=1)
    carol = rated["carol"]
    assert carol.games == 0 and math.isnan(carol.rating) and _no_interval(carol)
    without = bradley_terry(games, entrants=["alice", "bob"], resamples=200, seed=1)
    for name in ("alice", "bob"):
        assert rated[name].low < rated[name].rating < rated[name].high
        assert rated[name] == without[name]
    nothing = bradley_terry([], entrants=["alice", "bob"], resamples=200, seed=1)
    assert all(math.isnan(line.rating) and _no_interval(line) for line in nothing.values())


def test_resamples_in_batches_give_the_same_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    # A big field is bootstrapped in batches to bound memory; the batches draw the same
    # resamples from the seeded generator as one big draw would.
    names = ["alice", "bob", "charlie", "dave"]
    games = [
        two_seat(names[i % 4], names[(i + 1 + i // 4) % 4], winner=(i * 5) % 3 % 2)
        for i in range(80)
        if i % 4 != (i + 1 + i // 4) % 4
    ]
    whole = bradley_terry(games, resamples=100, seed=3)
    monkeypatch.setattr("arena.ratings.bt._BATCH_CELLS", 16 * 7)  # seven resamples a batch
    assert bradley_terry(games, resamples=100, seed=3) == whole


@SETTINGS
@given(
    outcomes=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 2)), min_size=1
    ),
    order=st.permutations(["alice", "bob", "charlie", "dave", "erin"]),
)
def test_bradley_terry_does_not_depend_on_the_entrant_order(
    outcomes: list[tuple[int, int, int]], order: list[str]
) -> None:
    names = ["alice", "bob", "charlie", "dave", "erin"]
    games = [
        two_seat(names[a], names[b], winner=None if w == 2 else w) for a, b, w in outcomes if a != b
    ]
    plain = bradley_terry(games, entrants=names, resamples=20, seed=5)
    shuffled = bradley_terry(games, entrants=order, resamples=20, seed=5)
    for name in names:
        assert shuffled[name].rating == pytest.approx(plain[name].rating, abs=1e-6,
                                                      nan_ok=True)  # nan: no games
        assert shuffled[name].low == pytest.approx(plain[name].low, abs=1e-6, nan_ok=True)
        assert shuffled[name].high == pytest.approx(plain[name].high, abs=1e-6, nan_ok=True)


# --- standings --------------------------------------------------------------------------------
def test_standings_count_games_wins_points_strikes_and_forfeits() -> None:
    games = [
        GameResult(
            ("alice", "bob"), winner=0, points_left=(0, 30), scores=(500, 120), strikes=(0, 1)
        ),
        GameResult(
            ("bob", "alice"),
            winner=1,
            points_left=(12, 0),
            scores=(0, 12),
            strikes=(3, 0),
            forfeited=frozenset({0}),
        ),
        GameResult(("alice", "bob"), winner=1, points_left=(8, 0), scores=(40, 510)),
    ]
    alice, bob, charlie = standings(games, entrants=["charlie", "bob", "alice"])
    assert (alice.entrant, alice.games, alice.wins, alice.points) == ("alice", 3, 2, 552)
    assert alice.win_rate == pytest.approx(2 / 3)
    assert alice.avg_points_left == pytest.approx(8 / 3)  # (0 + 0 + 8) / 3
    assert (bob.wins, bob.points, bob.strikes, bob.forfeits) == (1, 630, 4, 1)
    assert bob.avg_points_left == pytest.approx(14)  # (30 + 12 + 0) / 3
    assert (charlie.entrant, charlie.games) == ("charlie", 0)
    assert charlie.win_rate is None and charlie.avg_points_left is None


def test_standings_rank_by_win_rate_while_entrants_have_played_unequal_numbers_of_games() -> None:
    """A running or cancelled round robin: 3 wins of 4 ranks above 4 wins of 7."""
    games = [
        *[GameResult(("greedy", "random"), winner=0, points_left=(0, 9)) for _ in range(4)],
        *[GameResult(("greedy", "random"), winner=1, points_left=(9, 0)) for _ in range(3)],
        *[GameResult(("heuristic", "random"), winner=0, points_left=(0, 9)) for _ in range(3)],
        GameResult(("heuristic", "random"), winner=1, points_left=(9, 0)),
    ]
    table = standings(games, entrants=["greedy", "heuristic", "random"])
    assert [(s.entrant, s.wins, s.games) for s in table] == [
        ("heuristic", 3, 4), ("greedy", 4, 7), ("random", 4, 11)]


def test_standings_with_equal_games_rank_by_wins_then_points() -> None:
    games = [
        GameResult(("a", "b"), winner=0, points_left=(0, 20), scores=(20, 0)),
        GameResult(("b", "a"), winner=0, points_left=(0, 5), scores=(5, 0)),
    ]
    assert [s.entrant for s in standings(games, entrants=["b", "a"])] == ["a", "b"]


def test_an_entrant_with_no_games_comes_after_those_who_lost_every_game() -> None:
    """No win rate is not a 0% one: a bot that never sat does not rank above a bot that
    played and lost (by its 0 points left, as it did)."""
    games = [GameResult(("alice", "bob"), winner=0, points_left=(0, 30)) for _ in range(2)]
    table = standings(games, entrants=["carol", "bob", "alice"])
    assert [s.entrant for s in table] == ["alice", "bob", "carol"]


def test_at_three_seats_the_standings_and_bradley_terry_may_order_bots_differently() -> None:
    """docs/ratings.md, rank and Bradley-Terry: only first place is a win in the standings,
    where Bradley-Terry counts the whole finishing order. bob wins once and is second five
    times; alice wins twice and is last four times: alice ranks above bob, bob rates above."""
    def game(*order: str) -> GameResult:  # first to last: no cards left, 5, 10
        return GameResult(tuple(order), winner=0, points_left=(0, 5, 10))

    games = [game("alice", "bob", "charlie")] * 2 + [game("charlie", "bob", "alice")] * 3 \
        + [game("bob", "charlie", "alice")]
    table = [s.entrant for s in standings(games, entrants=["alice", "bob", "charlie"])]
    assert table == ["charlie", "alice", "bob"]
    rated = bradley_terry(games, resamples=0)
    assert rated["bob"].rating > rated["alice"].rating
