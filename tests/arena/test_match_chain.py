"""A match task goes on with its tournament's next pending matches as its own last games end
(``arena.runner.MatchRun``'s chain): every game is still recorded once, a match another
worker holds is left to it, every claim held is renewed, and a bot found unresponsive in one
match gets another chance in the next, as it would under a driver of its own."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, OperationalError, connection
from django.utils import timezone

from arena import runner, services
from arena.models import Match, MatchStatus, Tournament
from arena.runner import MatchRun
from bots.driver import Driver
from bots.models import Bot
from bots.transport import CallResult
from games.models import Game, GameStatus
from tests.arena.tournament_helpers import (
    assert_consistent,
    assert_recorded_once,
    http_bots,
    tournament_of,
)
from tests.bots.fault_server import FaultServer

pytestmark = pytest.mark.django_db(transaction=True)


def _slow(_url: str, payload: Any) -> CallResult:
    """An in-process bot: the first legal move, a millisecond late (on the driver's loop)."""
    if "legal_moves" not in payload:  # a start or end notice
        return CallResult(True, 200, {}, 0.1, None, "")
    time.sleep(0.001)
    return CallResult(True, 200, {"move": payload["legal_moves"][0]}, 1.0, None, "")


def _three_matches_of_whole_games(owner: Any, bots: list[Bot]
                                  ) -> tuple[Tournament, list[Match]]:
    """A started round robin of three bots, 4 games to 500 points a pairing; its matches."""
    tournament = tournament_of(owner, bots, options={}, games_per_pairing=4)
    services.tournament_start(tournament_id=tournament.pk, user=owner, dispatch=False)
    return tournament, list(Match.objects.select_related("tournament").filter(
        tournament=tournament).order_by("number"))


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
            MatchRun(first, token, answer=_slow, chain=True).run()
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


def test_a_database_error_in_one_match_leaves_the_others_playing(
        alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second match's begin fails while the first match's whole games are in play: the
    second is dropped alone (claimed, nothing begun: the sweep resends it once its claim is
    stale), no further match is taken on, and the first plays to its end (before: every game
    of the chain was stopped and dealt again)."""
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2
    real = services.games_begin
    failing: set[int] = set()

    def games_begin(**kwargs: Any) -> Any:
        if kwargs["match_id"] in failing:
            raise OperationalError("the database refused the begin")
        return real(**kwargs)

    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament, (first, second, third) = _three_matches_of_whole_games(alice, bots)
        failing.add(second.pk)
        monkeypatch.setattr(services, "games_begin", games_begin)
        token = services.match_claim(match_id=first.pk)
        assert token is not None
        with pytest.raises(OperationalError):
            MatchRun(first, token, answer=_slow, chain=True).run()
        statuses = dict(Match.objects.filter(tournament=tournament).values_list("pk", "status"))
        assert statuses == {first.pk: MatchStatus.DONE, second.pk: MatchStatus.RUNNING,
                            third.pk: MatchStatus.PENDING}
        second.refresh_from_db()
        assert (second.games_done, second.live) == (0, {})
        assert not Game.objects.filter(status=GameStatus.RUNNING).exists()
        # Its claim goes stale; a later run takes it over and plays the rest.
        monkeypatch.setattr(services, "games_begin", real)
        Match.objects.filter(pk=second.pk).update(
            claimed_at=timezone.now() - timedelta(seconds=3600))
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)


def test_games_over_as_they_begin_are_recorded_within_a_second(
        alice: Any, settings: Any) -> None:
    """A disabled bot's games end as they begin (its seats forfeited): they are recorded for
    the tournament within PROGRESS_WITHIN_SECONDS even while its match's other games play on,
    not when the next of those ends."""
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, options={}, games_per_pairing=4)  # to 500
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        [match] = Match.objects.select_related("tournament").filter(tournament=tournament)
        token = services.match_claim(match_id=match.pk)
        assert token is not None
        run = MatchRun(match, token)
        run._open()
        # The first game is in play; then the bot is disabled: the next games begin over.
        with Driver(answer=_slow, notices=False) as playing:
            run._playing = playing
            owner: dict[int, MatchRun] = {}
            run._begin_into(1, owner)
            Bot.objects.filter(pk=bots[0].pk).update(enabled=False)
            run._begin_into(1, owner)
            assert run._ended and run._numbers  # over at once, and one still in play
            assert run._record_by is not None
            assert run._record_by - time.monotonic() <= 1.0
            playing.stop()


def test_a_match_whose_games_wait_for_a_deal_in_play_lets_the_next_match_use_the_slots(
        alice: Any) -> None:
    """Duplicate deals at two seats: a match's two seatings of a deal are played one after the
    other, never side by side, so a match alone keeps one slot busy; the chain fills the
    others with the next matches' games (each match's deals are its own)."""
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first = Match.objects.select_related("tournament").filter(
            tournament=tournament).order_by("number")[0]
        token = services.match_claim(match_id=first.pk)
        assert token is not None

        def slow(url: str, payload: Any) -> CallResult:
            # A game then lasts 130 ms at least (13 turns), far longer than a claim takes.
            time.sleep(0.01 if "legal_moves" in payload else 0)
            return _slow(url, payload)

        MatchRun(first, token, answer=slow, chain=True).run()
        assert services.tournament_finalize(tournament_id=tournament.pk)  # (match_play's part)
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    games = {record.number: record.game for record in done.tournament_games.all()}
    spans = {m.number: [games[item["number"]] for item in m.plan] for m in done.matches.all()}
    for one, twin in spans.values():
        assert one.seed == twin.seed and one.started_at is not None  # a duplicate deal
        assert max(one.started_at, twin.started_at) >= min(one.finished_at, twin.finished_at)
    # The second match began while the first match's first seating was still in play.
    assert min(g.started_at for g in spans[1]) < min(g.finished_at for g in spans[0])


def test_a_connection_lost_in_one_match_leaves_the_others_playing(
        alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The database connection breaks as the second match opens, outside any transaction (a
    server restart, a failover): that match alone is dropped, and the first plays on over a
    new connection (a review: the broken connection stayed, and every match failed in turn)."""
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2
    real = services.live_settle
    broken: list[int] = []

    def live_settle(**kwargs: Any) -> Any:
        if kwargs["match_id"] == second.pk and not broken:
            broken.append(second.pk)
            connection.connection.close()  # the socket gone, as the server's end would be
        return real(**kwargs)

    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament, (first, second, third) = _three_matches_of_whole_games(alice, bots)
        monkeypatch.setattr(services, "live_settle", live_settle)
        token = services.match_claim(match_id=first.pk)
        assert token is not None
        with pytest.raises(DatabaseError):
            MatchRun(first, token, answer=_slow, chain=True).run()
        connection.close()
        statuses = dict(Match.objects.filter(tournament=tournament).values_list("pk", "status"))
    assert broken == [second.pk]
    assert statuses == {first.pk: MatchStatus.DONE, second.pk: MatchStatus.RUNNING,
                        third.pk: MatchStatus.PENDING}


def test_matches_over_as_they_begin_end_one_by_one(
        alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bot but one disabled: each match's games are over as they begin. Each match
    taken on ends before the next is claimed, instead of the chain holding every claim until
    none is left (a review)."""
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2
    held: list[int] = []
    real = runner._Chain._next_match

    def next_match(chain: Any) -> Any:
        taken = real(chain)
        held.append(len(chain.runs))
        return taken

    monkeypatch.setattr(runner._Chain, "_next_match", next_match)
    with http_bots(alice, ["greedy", "heuristic", "random", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        Bot.objects.filter(pk__in=[bot.pk for bot in bots[1:]]).update(enabled=False)
        first = Match.objects.select_related("tournament").filter(
            tournament=tournament).order_by("number")[0]
        token = services.match_claim(match_id=first.pk)
        assert token is not None
        MatchRun(first, token, answer=_slow, chain=True).run()
    assert held and max(held) <= 2, held
    assert services.tournament_finalize(tournament_id=tournament.pk)
    assert_recorded_once(Tournament.objects.get(pk=tournament.pk))
