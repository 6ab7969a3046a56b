"""The game list at scale (a review of a year of games: 2.4 s a page at 160,000 games). A page
costs the same few queries whatever the number of games; no query groups the seats of every
game, none reads the hidden state, and the count is a plain count of games."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from games.models import Game, GameStatus, Seat
from tests.games.conftest import create_game

pytestmark = pytest.mark.django_db


def add_games(template: dict[str, Any], creator: Any, taker: Any, count: int) -> None:
    """``count`` more two-seat tables like ``template``: every third one full, the others with
    their creator only."""
    options = Game.objects.get(pk=template["id"]).options
    for number in range(count):
        game = Game.objects.create(options=options, seed=number, created_by=creator)
        Seat.objects.create(game=game, index=0, user=creator)
        Seat.objects.create(game=game, index=1, user=taker if number % 3 == 0 else None)


def list_queries(client: APIClient, query: dict[str, Any]) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/api/games/", query).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize("query", [{}, {"status": "open"}, {"page": 2, "page_size": 5}])
def test_a_page_costs_the_same_queries_with_ten_times_the_games(
    alice: Any, bob: Any, alice_api: APIClient, query: dict[str, Any]
) -> None:
    template = create_game(alice_api, seats=2)
    add_games(template, alice, bob, 12)
    few = list_queries(alice_api, query)
    add_games(template, alice, bob, 120)
    many = list_queries(alice_api, query)
    assert len(many) == len(few)
    for sql in many:
        assert "GROUP BY" not in sql  # no seat counted for every game before paging
        assert '"games_game"."state"' not in sql and '"games_game"."rng"' not in sql
    count = next(sql for sql in many if "COUNT(" in sql)
    assert "games_seat" not in count  # the count is of games, not of games joined to seats


def test_open_seats_and_the_lobby_count_free_seats_as_the_seats_say(
    alice: Any, bob: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    template = create_game(alice_api, seats=2)
    add_games(template, alice, bob, 9)
    full = create_game(bob_api, seats=2)
    assert alice_api.post(f"/api/games/{full['id']}/join/").status_code == 200

    listed = alice_api.get("/api/games/", {"page_size": 100}).json()["results"]
    for game in listed:
        free = Seat.objects.filter(game_id=game["id"], user=None, bot=None).count()
        assert game["open_seats"] == free
    lobby = alice_api.get("/api/games/", {"open_seats": "true", "page_size": 100}).json()
    with_room = {game.pk for game in Game.objects.filter(status=GameStatus.OPEN)
                 if game.seats.filter(user=None, bot=None).exists()}
    assert {game["id"] for game in lobby["results"]} == with_room
    assert lobby["count"] == len(with_room) == 1 + 6  # the template and two in three others


@pytest.mark.postgres
def test_on_postgresql_a_page_is_read_off_the_newest_games_index(alice_api: APIClient) -> None:
    create_game(alice_api, seats=2)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table would be scanned
        sql, params = Game.objects.order_by("-created_at", "-id")[:20].query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "game_newest" in plan and "Sort" not in plan, plan
