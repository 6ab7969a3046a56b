"""Tournaments for the tests: reference bots served over HTTP on 127.0.0.1, registered,
verified and entered through the services; checks that recompute what a tournament stored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings

from arena import records, services
from arena.models import Match, MatchStatus, Rating, RatingChange, Tournament, TournamentGame
from arena.ratings import elo_ratings, standings
from bots import services as bot_services
from bots.models import Bot
from bots.serve import serve_in_thread
from games.models import Game, GameStatus

ONE_HAND = {"single_hand": True}


@contextmanager
def http_bots(owner: Any, strategies: list[str]) -> Iterator[list[Bot]]:
    """One verified, enabled bot per strategy, each its own HTTP server on 127.0.0.1."""
    stops: list[Callable[[], None]] = []
    bots: list[Bot] = []
    try:
        for i, strategy in enumerate(strategies):
            bot, secret = bot_services.bot_create(
                owner=owner, name=f"{strategy}-{i}", url="http://127.0.0.1:9/")
            url, stop = serve_in_thread(strategy, secret, seed=1000 + i)
            stops.append(stop)
            Bot.objects.filter(pk=bot.pk).update(url=url, verified=True)
            bots.append(Bot.objects.get(pk=bot.pk))
        yield bots
    finally:
        for stop in stops:
            stop()


def tournament_of(owner: Any, bots: list[Bot], **kwargs: Any) -> Tournament:
    params: dict[str, Any] = {"name": "Test cup", "options": ONE_HAND, "games_per_pairing": 2,
                              "seed": 20261123, **kwargs}
    tournament = services.tournament_create(owner=owner, **params)
    for bot in bots:
        services.entrant_enter(tournament_id=tournament.pk, bot_id=bot.pk, user=bot.owner)
    return tournament


def assert_recorded_once(tournament: Tournament) -> None:
    """Every planned game recorded exactly once, counters matching the rows."""
    tournament.refresh_from_db()
    records = TournamentGame.objects.filter(tournament=tournament)
    planned = sorted(item["number"] for m in tournament.matches.all() for item in m.plan)
    numbers = sorted(records.values_list("number", flat=True))
    assert numbers == planned == list(range(tournament.games_total))
    assert tournament.games_done == len(numbers)
    assert tournament.matches_done == tournament.matches_total
    assert not Match.objects.filter(tournament=tournament).exclude(status=MatchStatus.DONE)
    for match in tournament.matches.all():
        assert match.games_done == match.games_total == records.filter(match=match).count()
        assert match.live == {}
    games = Game.objects.filter(tournament_game__tournament=tournament)
    assert games.count() == len(numbers)
    # Finished, or aborted by staff (recorded as it stood, unrated): never "interrupted".
    assert not games.exclude(status=GameStatus.FINISHED).exclude(
        status=GameStatus.ABORTED, end_reason="staff").exists()
    # Each game dealt from its planned seed, its bots in the planned seats.
    plan = {i["number"]: i for m in tournament.matches.all() for i in m.plan}
    for record in records.select_related("game"):
        assert record.game.seed == plan[record.number]["seed"]
        seats = list(record.game.seats.order_by("index").values_list("bot_id", flat=True))
        assert seats == record.seats == plan[record.number]["seats"]


def assert_consistent(tournament: Tournament) -> None:
    """The stored standings and Elo are what the ratings modules make of the stored games."""
    tournament.refresh_from_db()
    results = records.tournament_results(tournament)
    entrants = list(tournament.entrants.order_by("id").values_list("bot_id", flat=True))
    table = standings(results, entrants=entrants)
    assert [row["bot"] for row in tournament.standings] == [s.entrant for s in table], (
        tournament.standings, table)
    assert [row["wins"] for row in tournament.standings] == [s.wins for s in table]
    # Elo: every rated game of the rule set, replayed in TournamentGame id order.
    every = [records.result_of(r) for r in TournamentGame.objects.filter(
        tournament__rule_set=tournament.rule_set, tournament__rated=True).order_by("id")]
    expected, history = elo_ratings(every, start=settings.ELO_START, k=settings.ELO_K)
    stored = dict(Rating.objects.filter(rule_set=tournament.rule_set)
                  .values_list("bot_id", "elo"))
    assert stored.keys() == expected.keys()
    for bot, elo in expected.items():
        assert abs(stored[bot] - elo) < 1e-9
    changes = RatingChange.objects.filter(rating__rule_set=tournament.rule_set)
    assert changes.count() == len(history)
    for rating in Rating.objects.filter(rule_set=tournament.rule_set):
        played = [r for r in every if r.rated and rating.bot_id in r.players]
        assert rating.games == len(played)
        assert rating.wins == sum(r.winner is not None and r.players[r.winner] == rating.bot_id
                                  for r in played)
    assert tournament.finalized_at is not None
    assert {r["bot"] for r in tournament.bradley_terry["ratings"]} == set(entrants)


def rank(tournament: Tournament, bot: Bot) -> int:
    return next(row["rank"] for row in tournament.standings if row["bot"] == bot.pk)
