"""A bot's rating history grows with every rated game (3,052 points, 297 KB for a review's
busiest bot). ``limit`` asks for the newest points only, still oldest first, with ``more``
saying older ones were left out; without it the whole history comes, as it always has.
``before`` (a game of the history) pages back from there."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from arena.models import Rating, RatingChange
from bots.models import Bot
from games import uno as engine
from games.models import Game

pytestmark = pytest.mark.django_db


def rated_bot(owner: Any, points: int) -> Bot:
    bot = Bot.objects.create(owner=owner, name=f"rated-{points}", url="http://bot.invalid/",
                             secret="s" * 32)
    rating = Rating.objects.create(bot=bot, rule_set="official", elo=1500 + points,
                                   games=points, wins=0)
    options = engine.Options().to_json()
    for number in range(points):
        game = Game.objects.create(options=options, seed=number, created_by=owner)
        RatingChange.objects.create(rating=rating, game=game, before=1500 + number,
                                    after=1501 + number)
    return bot


@pytest.fixture
def api(charlie: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(charlie)
    return client


def history(api: APIClient, bot: Bot, query: str = "") -> dict[str, Any]:
    response = api.get(f"/api/bots/{bot.pk}/ratings/{query}")
    assert response.status_code == 200, response.content
    return response.json()


def test_without_a_limit_the_whole_history_comes_and_nothing_is_left_out(
    alice: Any, api: APIClient
) -> None:
    bot = rated_bot(alice, 5)
    whole = history(api, bot)
    assert [p["after"] for p in whole["history"]] == [1501, 1502, 1503, 1504, 1505]
    assert whole["more"] is False


def test_a_limit_gives_the_newest_points_oldest_first_and_says_there_is_more(
    alice: Any, api: APIClient
) -> None:
    bot = rated_bot(alice, 5)
    whole = history(api, bot)["history"]
    newest = history(api, bot, "?limit=2")
    assert newest["history"] == whole[-2:] and newest["more"] is True
    for enough in (5, 50):
        assert history(api, bot, f"?limit={enough}") == {**history(api, bot), "more": False}


def test_a_limited_page_costs_the_same_queries_for_a_longer_history(
    alice: Any, api: APIClient
) -> None:
    def queries(bot: Bot) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert len(history(api, bot, "?limit=3")["history"]) == 3
        return len(captured.captured_queries)

    assert queries(rated_bot(alice, 4)) == queries(rated_bot(alice, 40))


@pytest.mark.parametrize("bad", ["0", "-1", "x", "1.0", "", "10001"])
def test_a_limit_that_is_not_a_positive_count_is_a_400(
    alice: Any, api: APIClient, bad: str
) -> None:
    bot = rated_bot(alice, 1)
    response = api.get(f"/api/bots/{bot.pk}/ratings/?limit={bad}")
    assert response.status_code == 400 and "limit" in response.json()["fields"], response.json()


def test_before_pages_back_through_the_whole_history_with_nothing_missed_or_repeated(
    alice: Any, api: APIClient
) -> None:
    bot = rated_bot(alice, 7)
    whole = history(api, bot)["history"]
    pages, query = [], "?limit=3"
    while True:
        page = history(api, bot, query)
        pages.insert(0, page["history"])
        if not page["more"]:
            break
        query = f"?limit=3&before={page['history'][0]['game']}"
    assert [len(page) for page in pages] == [1, 3, 3]
    assert [point for page in pages for point in page] == whole


def test_before_without_a_limit_gives_every_older_point(alice: Any, api: APIClient) -> None:
    bot = rated_bot(alice, 4)
    whole = history(api, bot)["history"]
    older = history(api, bot, f"?before={whole[2]['game']}")
    assert older["history"] == whole[:2] and older["more"] is False
    assert history(api, bot, f"?before={whole[0]['game']}")["history"] == []


def test_before_a_game_that_is_not_in_the_history_is_a_400(alice: Any, api: APIClient) -> None:
    bot, other = rated_bot(alice, 2), rated_bot(alice, 3)
    not_ours = history(api, other)["history"][0]["game"]
    for bad in (str(not_ours), "0", "x", str(2**63), "9" * 19, "1" * 30):
        response = api.get(f"/api/bots/{bot.pk}/ratings/?limit=2&before={bad}")
        assert response.status_code == 400, response.content
        assert "before" in response.json()["fields"], response.json()


def test_before_counts_on_the_ladder_asked_for_only(alice: Any, api: APIClient) -> None:
    bot = rated_bot(alice, 2)
    on_official = history(api, bot)["history"][-1]["game"]
    single_hand = Rating.objects.create(bot=bot, rule_set="single_hand", elo=1500, games=2,
                                        wins=0)
    games = [Game.objects.create(options=engine.Options(single_hand=True).to_json(), seed=n,
                                 created_by=alice) for n in (101, 102)]
    for game in games:
        RatingChange.objects.create(rating=single_hand, game=game, before=1500, after=1510)
    asked = f"/api/bots/{bot.pk}/ratings/?rule_set=single_hand"
    assert api.get(f"{asked}&before={on_official}").status_code == 400
    older = api.get(f"{asked}&before={games[1].pk}").json()
    assert [point["game"] for point in older["history"]] == [games[0].pk]
