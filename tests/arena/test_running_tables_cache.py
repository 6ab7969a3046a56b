"""A running tournament's standings and Bradley-Terry fit (a review: refit on every request,
0.9 s at 1,560 games, and the results read twice for the admin's page). Each is computed once
per game recorded and kept in the cache, keyed by the tournament and its ``games_done``; the
results are read once for both."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from arena import records, selectors
from arena.models import Tournament
from tests.arena.admin_fixtures import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _own_cache(fresh_cache: None) -> None:
    pass


@pytest.fixture
def world(alice: Any, bob: Any) -> World:
    return build_world(alice, bob)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the results are read and the fit is made."""
    counted = {"results": 0, "fits": 0}
    results, fit = records.tournament_results, records.bradley_terry_json

    def read(tournament: Tournament) -> Any:
        counted["results"] += 1
        return results(tournament)

    def fitted(tournament: Tournament, found: Any) -> Any:
        counted["fits"] += 1
        return fit(tournament, found)

    monkeypatch.setattr(records, "tournament_results", read)
    monkeypatch.setattr(selectors, "_TABLES", {**selectors._TABLES,
                                               selectors.BRADLEY_TERRY: fitted})
    return counted


def fresh(world: World) -> Tournament:
    """The tournament as a new request reads it."""
    return Tournament.objects.get(pk=world.running.pk)


def test_polls_between_two_games_cost_a_cache_hit(world: World, reads: dict[str, int]) -> None:
    first = fresh(world)
    table = selectors.tournament_standings(tournament=first)
    fit = selectors.tournament_bradley_terry(tournament=first)
    assert reads == {"results": 1, "fits": 1}  # one read for both tables
    expected = records.standings_rows(first, records.tournament_results(first))
    assert table == expected and table  # what computing it now gives
    reads["results"] = 0

    for _ in range(3):
        again = fresh(world)
        assert selectors.tournament_standings(tournament=again) == table
        assert selectors.tournament_bradley_terry(tournament=again) == fit
    assert reads == {"results": 0, "fits": 1}


def test_a_game_recorded_is_in_the_next_poll(world: World, reads: dict[str, int]) -> None:
    selectors.tournament_standings(tournament=fresh(world))
    Tournament.objects.filter(pk=world.running.pk).update(games_done=world.running.games_done + 1)
    later = fresh(world)
    selectors.tournament_standings(tournament=later)
    selectors.tournament_bradley_terry(tournament=later)
    assert reads == {"results": 2, "fits": 1}


def test_the_api_standings_read_the_results_once_per_game_and_never_fit(
    world: World, reads: dict[str, int], charlie: Any
) -> None:
    api = APIClient()
    api.force_authenticate(charlie)
    url = f"/api/tournaments/{world.running.pk}/standings/"
    tables = [api.get(url).json()["standings"] for _ in range(3)]
    assert tables[0] == tables[2] and tables[0]
    assert reads == {"results": 1, "fits": 0}


def test_an_unreachable_cache_only_costs_the_computation(
    world: World, reads: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Down:
        def get(self, *args: Any) -> Any:
            raise OSError("cache down")

        set = set_many = add = get

    monkeypatch.setattr(selectors, "cache", Down())
    assert selectors.tournament_standings(tournament=fresh(world))
    assert selectors.tournament_standings(tournament=fresh(world))
    assert reads["results"] == 2


def test_while_one_request_makes_a_new_table_the_others_get_the_latest(
    world: World, reads: dict[str, int]
) -> None:
    """A busy tournament's viewers, polling after each game, do not all make the same table
    at once: one does, the others are served the latest one made meanwhile."""
    from django.core.cache import cache

    first = fresh(world)
    table = selectors.tournament_standings(tournament=first)
    assert reads["results"] == 1
    key = f"arena:{selectors.STANDINGS}:{first.pk}:{first.games_done + 1}"
    assert cache.add(f"{key}:making", 1, 30)  # another request is making the next one
    Tournament.objects.filter(pk=first.pk).update(games_done=first.games_done + 1)

    assert selectors.tournament_standings(tournament=fresh(world)) == table  # the latest
    assert reads["results"] == 1

    cache.delete(f"{key}:making")  # it failed, or took too long: this one makes it
    assert selectors.tournament_standings(tournament=fresh(world)) == table
    assert reads["results"] == 2
