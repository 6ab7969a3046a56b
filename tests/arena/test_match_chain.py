"""A match task goes on with its tournament's next pending matches as its own last games end
(``arena.runner.MatchRun``'s chain): every game is still recorded once, a match another
worker holds is left to it, every claim held is renewed, and a bot found unresponsive in one
match gets another chance in the next, as it would under a driver of its own."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from arena import services
from arena.models import Match, MatchStatus, Tournament
from arena.runner import MatchRun
from bots.models import Bot
from bots.transport import CallResult
from games.models import Game
from tests.arena.tournament_helpers import (
    assert_consistent,
    assert_recorded_once,
    http_bots,
    tournament_of,
)
from tests.bots.fault_server import FaultServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_match_task_goes_on_with_the_tournaments_next_pending_matches(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first, *others = Match.objects.filter(tournament=tournament).order_by("number")
        assert services.match_play(match_id=first.pk) is True
        for match in others:  # their own tasks, arriving late: nothing left to play
            assert services.match_play(match_id=match.pk) is False
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)


def test_a_match_another_worker_holds_is_left_to_it(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first, held, last = Match.objects.filter(tournament=tournament).order_by("number")
        token = services.match_claim(match_id=held.pk)  # another worker's, fresh
        assert token is not None
        assert services.match_play(match_id=first.pk) is True
    statuses = dict(Match.objects.filter(tournament=tournament).values_list("pk", "status"))
    assert statuses == {first.pk: MatchStatus.DONE, held.pk: MatchStatus.RUNNING,
                        last.pk: MatchStatus.DONE}
    held.refresh_from_db()
    assert held.claim_token == token and held.games_done == 0 and held.live == {}
    assert Tournament.objects.get(pk=tournament.pk).finalized_at is None


def test_every_claim_a_chain_holds_is_renewed_while_it_plays(alice: Any, settings: Any) -> None:
    """A sweep that tries to take each running match over all along never succeeds: the
    chain's one heartbeat renews the claims of the matches it took on, the ones waiting for a
    slot included."""
    settings.TOURNAMENT_HEARTBEAT_SECONDS = 0.2
    settings.TOURNAMENT_CLAIM_STALE_SECONDS = 1
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2  # two matches in flight at times

    def slow(_url: str, payload: Any) -> CallResult:
        if "legal_moves" not in payload:  # a start or end notice
            return CallResult(True, 200, {}, 0.1, None, "")
        time.sleep(0.001)  # on the loop: the games take turns, several seconds in all
        return CallResult(True, 200, {"move": payload["legal_moves"][0]}, 1.0, None, "")

    taken_over: list[int] = []
    stop = threading.Event()

    def sweep() -> None:
        try:
            while not stop.wait(0.1):
                for match_id in Match.objects.filter(
                        tournament=tournament, status=MatchStatus.RUNNING
                ).values_list("pk", flat=True):
                    if services.match_claim(match_id=match_id) is not None:
                        taken_over.append(match_id)
        finally:
            connection.close()

    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        # Whole games (to 500 points): a match's last game runs long beside the next match's.
        tournament = tournament_of(alice, bots, options={}, games_per_pairing=2)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first = Match.objects.select_related("tournament").filter(
            tournament=tournament).order_by("number")[0]
        token = services.match_claim(match_id=first.pk)
        assert token is not None
        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        try:
            started = time.monotonic()
            MatchRun(first, token, answer=slow, chain=True).run()
            took = time.monotonic() - started
        finally:
            stop.set()
            sweeper.join(10)
    assert taken_over == []
    assert took > settings.TOURNAMENT_CLAIM_STALE_SECONDS  # long enough to have gone stale
    assert services.tournament_finalize(tournament_id=tournament.pk)  # (match_play's part)
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)


def test_a_bot_found_unresponsive_gets_another_chance_in_the_next_match(
        alice: Any, settings: Any) -> None:
    settings.TOURNAMENT_MATCH_CONCURRENCY = 1  # the games one after another
    with http_bots(alice, ["greedy", "random", "heuristic"]) as bots, \
            FaultServer(mode="hang") as hung:
        Bot.objects.filter(pk=bots[2].pk).update(url=hung.url)  # takes calls, never answers
        tournament = tournament_of(alice, bots, games_per_pairing=4, max_strikes=2,
                                   turn_timeout_ms=200)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert_recorded_once(done)
    with_it = [m for m in done.matches.order_by("number") if bots[2].pk in m.bots]
    assert len(with_it) == 2
    for match in with_it:
        records = done.tournament_games.filter(match=match).order_by("number")
        strikes = [r.result["strikes"][r.seats.index(bots[2].pk)] for r in records]
        # Called and struck out in the match's first game (not forfeited unheard because an
        # earlier match found it unresponsive), unheard in its last ones.
        assert strikes[0] == 2 and strikes[-1] == 0, strikes
    assert Game.objects.filter(tournament_game__tournament=done).count() == done.games_total
