"""The leaderboard at scale (a review of an 803-bot ladder: the admin's page took 815 queries
and 1.5 s, the API's 207 queries at 200 rows, one latency read per bot). Its lines cost the same
few queries for any number of bots, the admin builds the lines of the page it shows only, and
every number is the one the per-bot reads give."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from arena import presenters, selectors
from arena.models import Rating
from bots import selectors as bot_selectors
from bots.models import Bot, BotCall, CallKind
from games import uno as engine
from games.models import Game, Seat

pytestmark = pytest.mark.django_db
RULES = "official"


def add_ladder(owner: Any, count: int, *, seed: int = 0) -> list[Bot]:
    """``count`` rated bots with turn calls (some more than the latency window), a few other
    calls, and strikes at shared tables; one bot never called."""
    rng = random.Random(seed)
    start = Bot.objects.count()
    bots = Bot.objects.bulk_create(
        Bot(owner=owner, name=f"ladder-{start + n}", url="http://bot.invalid/", secret="s" * 32)
        for n in range(count))
    Rating.objects.bulk_create(Rating(bot=bot, rule_set=RULES, elo=rng.uniform(1300, 1700),
                                      games=10, wins=rng.randrange(11)) for bot in bots)
    calls = []
    for number, bot in enumerate(bots[1:]):
        for _ in range(rng.choice([3, 12, 40]) if number % 4 else 0):
            kind = CallKind.TURN if rng.random() < 0.8 else CallKind.END
            calls.append(BotCall(bot=bot, kind=kind, latency_ms=round(rng.uniform(1, 900), 1)))
    BotCall.objects.bulk_create(calls)
    options = engine.Options().to_json()
    for first in range(0, count, 10):
        game = Game.objects.create(options=options, seed=first, created_by=owner)
        Seat.objects.bulk_create(Seat(game=game, index=n, bot=bot, strikes=rng.randrange(3))
                                 for n, bot in enumerate(bots[first:first + 10]))
    return bots


def expected_line(rating: Rating, rank: int) -> dict[str, Any]:
    """What the per-bot reads say of one bot (the leaderboard's old way)."""
    latency = bot_selectors.latency(bot=rating.bot)
    strikes = Seat.objects.filter(bot=rating.bot).aggregate(n=Sum("strikes"))["n"] or 0
    return {"rank": rank, "bot": rating.bot_id, "latency_p50_ms": latency["p50_ms"],
            "latency_p99_ms": latency["p99_ms"], "strikes": strikes}


def test_many_bots_latencies_are_each_bots_own_over_its_newest_window(alice: Any) -> None:
    bots = add_ladder(alice, 30)
    ids = [bot.pk for bot in bots]
    for window in (5, 10, 500):
        together = bot_selectors.latencies(bot_ids=ids, window=window)
        assert together == {bot.pk: bot_selectors.latency(bot=bot, window=window)
                            for bot in bots}
        # PostgreSQL picks them in the database; the portable way agrees there too.
        assert bot_selectors._latencies_here(ids, window) == together
    assert together[bots[0].pk] == {"p50_ms": None, "p99_ms": None, "window": 0}
    assert bot_selectors.latencies(bot_ids=[]) == {}


def test_the_lines_of_a_page_are_the_per_bot_numbers_ranked_on_the_whole_ladder(
    alice: Any,
) -> None:
    add_ladder(alice, 40)
    ladder = selectors.ladder(rule_set=RULES)
    page = ladder[7:19]
    lines = selectors.leaderboard_lines(ratings=page)
    picked = ["rank", "bot", "latency_p50_ms", "latency_p99_ms", "strikes"]
    assert [{key: line[key] for key in picked} for line in lines] == [
        expected_line(rating, rank) for rank, rating in enumerate(ladder, start=1)][7:19]
    assert selectors.leaderboard(rule_set=RULES)[7:19] == lines
    rows = presenters.leaderboard_rows(page)
    assert [(r["rank"], r["p50_ms"], r["p99_ms"], r["strikes"]) for r in rows] == [
        (line["rank"], line["latency_p50_ms"], line["latency_p99_ms"], line["strikes"])
        for line in lines]


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_an_api_page_costs_the_same_queries_for_5_or_150_rows(
    alice: Any, charlie: Any
) -> None:
    add_ladder(alice, 160)
    api = APIClient()
    api.force_authenticate(charlie)
    few = count_queries(api, "/api/leaderboard/?page_size=5")
    many = count_queries(api, "/api/leaderboard/?page_size=150")
    assert many == few


def test_the_admin_leaderboard_costs_the_same_queries_on_a_ladder_twice_as_long(
    alice: Any, django_user_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[int] = []
    lines = selectors.leaderboard_lines

    def spied(*, ratings: Any) -> Any:
        built.append(len(ratings))
        return lines(ratings=ratings)

    monkeypatch.setattr(selectors, "leaderboard_lines", spied)
    staff = Client()
    staff.force_login(django_user_model.objects.create_superuser("root", password="root-pw-1"))
    add_ladder(alice, 60)
    short = count_queries(staff, "/admin/arena/rating/")
    add_ladder(alice, 60, seed=1)
    assert count_queries(staff, "/admin/arena/rating/") == short
    assert built == [50, 50]  # the page's lines, not the ladder's 60 and 120
    second_page = staff.get("/admin/arena/rating/?p=2").content.decode()
    # The second page's first bot is the ladder's 51st, numbered so.
    fifty_first = selectors.ladder(rule_set=RULES)[50].bot
    assert f'class="leaderboard-bot">{fifty_first.name}</a>' in second_page
    assert '<td class="field-rank">51</td>' in second_page
