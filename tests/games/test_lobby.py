"""Table spam: one user once made 20,000 tables in 130 s and the open-seat lobby was nothing
else. A user's open tables are capped (GAMES_MAX_OPEN_TABLES), and the lobby lists each
creator's newest table before anyone's second."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameStatus
from tests.games.conftest import create_game

pytestmark = pytest.mark.django_db


def test_it_refuses_a_table_beyond_the_open_table_cap(
    settings: Any, alice: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    settings.GAMES_MAX_OPEN_TABLES = 3
    for _ in range(3):
        create_game(alice_api, seats=2)
    refused = alice_api.post("/api/games/", {"seats": 2}, format="json")
    assert refused.status_code == 409
    assert refused.json()["code"] == "too_many_open_tables"
    assert Game.objects.filter(created_by=alice).count() == 3  # nothing half-written
    # Someone else's count is their own.
    create_game(bob_api, seats=2)


def test_a_started_or_abandoned_table_frees_its_place_under_the_cap(
    settings: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    settings.GAMES_MAX_OPEN_TABLES = 2
    first = create_game(alice_api, seats=2)
    second = create_game(alice_api, seats=2)
    assert alice_api.post("/api/games/", {"seats": 2}, format="json").status_code == 409
    assert bob_api.post(f"/api/games/{first['id']}/join/").status_code == 200
    assert alice_api.post(f"/api/games/{first['id']}/start/").status_code == 200
    third = create_game(alice_api, seats=2)
    assert alice_api.post("/api/games/", {"seats": 2}, format="json").status_code == 409
    assert alice_api.post(f"/api/games/{second['id']}/leave/").status_code == 200  # aborted
    assert Game.objects.get(pk=second["id"]).status == GameStatus.ABORTED
    create_game(alice_api, seats=2)
    assert third["id"]


def test_the_lobby_shows_every_creator_before_a_spammers_second_table(
    settings: Any, alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient
) -> None:
    settings.GAMES_MAX_OPEN_TABLES = 100
    alices = create_game(alice_api, seats=2)["id"]
    bobs = [create_game(bob_api, seats=3)["id"] for _ in range(2)]
    spam = [create_game(charlie_api, seats=2)["id"] for _ in range(30)]  # the newest, by far

    page = alice_api.get("/api/games/", {"open_seats": "true", "page_size": 5}).json()
    listed = [game["id"] for game in page["results"]]
    assert page["count"] == 33
    # Round one: each creator's newest, newest first; round two: the second newest of each.
    assert listed == [spam[-1], bobs[-1], alices, spam[-2], bobs[0]]

    # Every table is still listed exactly once across the pages.
    seen: list[int] = []
    for number in range(1, 8):
        page = alice_api.get(
            "/api/games/", {"open_seats": "true", "page_size": 5, "page": number}
        ).json()
        seen += [game["id"] for game in page["results"]]
    assert sorted(seen) == sorted([alices, *bobs, *spam])


def test_the_full_list_stays_newest_first(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    ids = [create_game(api, seats=2)["id"] for api in (alice_api, alice_api, bob_api)]
    listed = [game["id"] for game in alice_api.get("/api/games/").json()["results"]]
    assert listed == ids[::-1]
