"""Claims: a match is played by one worker at a time; a claim its worker stopped renewing is
taken over, the dead worker's live games settled (recorded if finished, else aborted and dealt
again from the same seed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from arena import records, services
from arena.models import Match, MatchStatus, RatingChange, Tournament, TournamentGame
from arena.runner import MatchRun
from bots import dispatch as bot_dispatch
from bots import runner as bot_runner
from bots import tasks as bot_tasks
from bots.advance import advance
from bots.models import Bot
from games import services as game_services
from games import tasks as game_tasks
from games.models import Game, GameStatus, Seat
from tests.arena.tournament_helpers import (
    assert_consistent,
    assert_recorded_once,
    http_bots,
    tournament_of,
)
from tests.bots.helpers import close_default_transport
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _bots_played_here(settings: Any) -> Iterator[None]:
    settings.BOTS_ALLOW_PRIVATE = True
    settings.BOTS_RUNNER = "off"
    yield
    close_default_transport()


def _dead_worker(match: Match, *, finish: bool) -> tuple[str, Game]:
    """What a worker killed mid-game leaves: the match claimed, one game live (finished but
    not recorded, or still running), the claim no longer renewed."""
    token = services.match_claim(match_id=match.pk)
    assert token is not None
    begun = services.games_begin(match_id=match.pk, token=token, items=match.plan[:1])
    assert begun is not None
    [(game, _seats)] = begun
    if finish:
        bot_runner.play_game(game.pk)
    _claim_goes_stale(match)
    return token, Game.objects.get(pk=game.pk)


def _claim_goes_stale(match: Match) -> None:
    """Its worker stopped renewing the claim long ago: the next to play the match takes it."""
    Match.objects.filter(pk=match.pk).update(claimed_at=timezone.now() - timedelta(seconds=3600))


def _stand(game_ids: list[int]) -> list[tuple[Any, ...]]:
    """What a clock check or a bot turn would change: the games' rows and their seats."""
    games = list(Game.objects.filter(pk__in=game_ids).order_by("pk").values_list(
        "pk", "status", "version", "move_count", "awaiting"))
    seats = list(Seat.objects.filter(game_id__in=game_ids).order_by("game_id", "index")
                 .values_list("game_id", "index", "strikes", "forfeited"))
    return games + seats


def _one_match_done_one_orphaned_one_pending(
    owner: Any, bots: list[Any]
) -> tuple[Tournament, list[Match]]:
    """A three-bot tournament as a worker (or server) stopped mid-way leaves it."""
    tournament = tournament_of(owner, bots)
    services.tournament_start(tournament_id=tournament.pk, user=owner, dispatch=False)
    matches = list(Match.objects.filter(tournament=tournament).order_by("number"))
    services.match_play(match_id=matches[0].pk, chain=False)  # that worker's one match
    _dead_worker(matches[1], finish=False)
    return tournament, matches


def test_a_fresh_claim_is_not_taken(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        assert services.match_claim(match_id=match.pk) is not None
        assert services.match_claim(match_id=match.pk) is None
        assert services.match_play(match_id=match.pk) is False
    assert Game.objects.count() == 0


def test_a_dead_workers_running_game_is_aborted_and_dealt_again(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        old_token, orphan = _dead_worker(match, finish=False)
        assert orphan.status == GameStatus.RUNNING
        assert services.match_play(match_id=match.pk) is True
        # The dead worker's claim is gone: had it lived on, it could record nothing.
        assert records.game_record(match_id=match.pk, token=old_token,
                                    number=match.plan[0]["number"], game_id=orphan.pk) is False
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    orphan.refresh_from_db()
    assert orphan.status == GameStatus.ABORTED
    assert orphan.end_reason == "interrupted"  # not "staff": nobody aborted it by hand
    replay = done.tournament_games.get(number=match.plan[0]["number"]).game
    assert replay.pk != orphan.pk and replay.seed == orphan.seed
    # The cut-off game's seed deals the game played in its place: its replay stays closed
    # to its bots' owner, even once the tournament is over (staff see it in the admin).
    held = client_for(alice).get(f"/api/games/{orphan.pk}/replay/")
    assert held.status_code == 409 and held.json()["code"] == "replay_held"
    assert client_for(alice).get(f"/api/games/{replay.pk}/replay/").status_code == 200
    notice = bot_runner.notice_body(game=orphan, kind="end", seats=list(orphan.seats.all()))
    assert notice["replay"] is None  # nor does its end notice carry it


def test_a_dead_workers_finished_game_is_recorded_as_it_is(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        _, orphan = _dead_worker(match, finish=True)
        assert orphan.status == GameStatus.FINISHED
        assert services.match_play(match_id=match.pk) is True
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert done.tournament_games.get(number=match.plan[0]["number"]).game_id == orphan.pk
    assert Game.objects.count() == done.games_total


def test_the_sweep_resends_orphaned_matches_and_finalizes(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []  # what the sweep hands the broker (the worker tests send for real)
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament, matches = _one_match_done_one_orphaned_one_pending(alice, bots)
        monkeypatch.setattr(services, "match_send",
                            lambda *, match_id: sent.append(match_id) or True)
        assert services.tournament_sweep() == {"sent": 2, "finalized": 0}
        assert sorted(sent) == [matches[1].pk, matches[2].pk]
        for match_id in sent:
            services.match_play(match_id=match_id)
    done = Tournament.objects.get(pk=tournament.pk)
    assert done.finalized_at is not None
    assert_recorded_once(done)
    assert services.tournament_sweep() == {"sent": 0, "finalized": 0}
    assert set(done.matches.values_list("status", flat=True)) == {MatchStatus.DONE}


def test_the_sweep_ends_a_cancelled_tournaments_match_its_dead_worker_left(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn clock leaves a match's games in flight to the match, so a cancelled
    tournament's match whose worker died must be taken over too, to end it (before: the sweep
    re-sent only a running tournament's matches; the match ran for ever, never finalized)."""
    sent: list[int] = []
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        _, orphan = _dead_worker(match, finish=False)
        services.tournament_cancel(tournament_id=tournament.pk, user=alice)
        monkeypatch.setattr(services, "match_send",
                            lambda *, match_id: sent.append(match_id) or True)
        assert services.tournament_sweep() == {"sent": 1, "finalized": 0}
        assert sent == [match.pk]
        assert services.match_play(match_id=match.pk) is True
    orphan.refresh_from_db()
    assert (orphan.status, orphan.end_reason) == (GameStatus.ABORTED, "interrupted")
    assert Match.objects.get(pk=match.pk).status == MatchStatus.CANCELLED
    done = Tournament.objects.get(pk=tournament.pk)
    assert done.finalized_at is not None and done.status == "cancelled"
    assert Game.objects.filter(created_by=alice).count() == 1  # nothing begun after the cancel
    assert services.tournament_sweep() == {"sent": 0, "finalized": 0}


def _games_played_under_a_claim(
    owner: Any, bots: Any, *, games_per_pairing: int, games: int
) -> tuple[Tournament, Match, str, list[tuple[int, int]]]:
    """A started tournament's one match, claimed, with its first ``games`` begun and played
    to the end but not recorded: the tournament, the match, the claim's token and the
    ``(number, game id)`` pairs ``records.games_record`` takes."""
    tournament = tournament_of(owner, bots, games_per_pairing=games_per_pairing)
    services.tournament_start(tournament_id=tournament.pk, user=owner, dispatch=False)
    match = Match.objects.get(tournament=tournament)
    token = services.match_claim(match_id=match.pk)
    assert token is not None
    items = match.plan[:games]
    begun = services.games_begin(match_id=match.pk, token=token, items=items)
    assert begun is not None and len(begun) == games
    for game, _ in begun:
        assert game.status == GameStatus.RUNNING
        bot_runner.play_game(game.pk)
    return tournament, match, token, [
        (item["number"], game.pk) for item, (game, _) in zip(items, begun, strict=True)]


def test_games_recorded_together_are_recorded_once_and_rated_in_id_order(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament, match, token, finished = _games_played_under_a_claim(
            alice, bots, games_per_pairing=4, games=3)
        assert records.games_record(match_id=match.pk, token="not-ours", finished=finished) == 0
        assert records.games_record(match_id=match.pk, token=token, finished=finished) == 3
        assert records.games_record(match_id=match.pk, token=token, finished=finished) == 0
        match.refresh_from_db()
        assert match.games_done == 3 and match.live == {}
        assert Tournament.objects.get(pk=tournament.pk).matches_done == 0  # one game to go
        _claim_goes_stale(match)
        assert services.match_play(match_id=match.pk) is True
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)  # Elo replayed game by game in id order is what was stored


def test_a_game_its_stopped_worker_finishes_during_the_takeover_is_recorded_not_dealt_again(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The takeover read the game running; its worker (stopped, not dead) woke and wrote it
    finished before the abort. It was taken as aborted: left unrecorded, its replay open, and
    its number dealt again from the same seed."""
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        _, orphan = _dead_worker(match, finish=False)
        abort = game_services.game_abort

        def its_worker_wakes_first(**kwargs: Any) -> Any:
            bot_runner.play_game(kwargs["game_id"])  # the stopped worker's last write
            return abort(**kwargs)

        monkeypatch.setattr(game_services, "game_abort", its_worker_wakes_first)
        assert services.match_play(match_id=match.pk) is True
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    recorded = done.tournament_games.get(number=match.plan[0]["number"])
    assert recorded.game_id == orphan.pk
    assert Game.objects.filter(seed=orphan.seed).count() == 1  # not dealt again


@pytest.mark.postgres
def test_two_matches_sharing_a_bot_rate_their_games_in_the_order_of_their_ids(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record of match A has drawn its games' ids and waits (a slow worker); match B,
    which shares a bot with it, records meanwhile. B's games get the higher ids, so they must
    be rated after A's: B waits for A's locks (before: it rated first, and the stored Elo was
    not a replay of the games in id order)."""
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=1)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        shared = bots[0].pk
        first, second = [m for m in Match.objects.filter(tournament=tournament).order_by("pk")
                         if shared in m.bots][:2]
        finished = {}
        for match in (first, second):
            token = services.match_claim(match_id=match.pk)
            assert token is not None
            begun = services.games_begin(match_id=match.pk, token=token, items=match.plan[:1])
            assert begun is not None
            [(game, _)] = begun
            bot_runner.play_game(game.pk)
            finished[match.pk] = (token, [(match.plan[0]["number"], game.pk)])

        drawn, go = threading.Event(), threading.Event()
        insert = records.game_rows.insert_new

        def slow_insert(model: Any, rows: Any) -> None:
            insert(model, rows)
            if threading.current_thread().name == "slow":
                drawn.set()
                go.wait(10)

        monkeypatch.setattr(records.game_rows, "insert_new", slow_insert)

        def record(match: Match) -> None:
            try:
                token, games = finished[match.pk]
                assert records.games_record(match_id=match.pk, token=token, finished=games) == 1
            finally:
                connection.close()

        slow = threading.Thread(target=record, args=(first,), name="slow")
        slow.start()
        assert drawn.wait(10)
        quick = threading.Thread(target=record, args=(second,), name="quick")
        quick.start()
        quick.join(1.0)  # it would be done by now if nothing held it back
        go.set()
        slow.join(10)
        quick.join(10)
    recorded = list(TournamentGame.objects.filter(tournament=tournament).order_by("pk"))
    assert [r.match_id for r in recorded] == [first.pk, second.pk]
    rated = RatingChange.objects.filter(rating__bot_id=shared).order_by("pk")
    assert [c.game_id for c in rated] == [r.game_id for r in recorded]


def test_the_embedded_sweep_goes_on_with_a_tournament_a_stopped_server_left(
    alice: Any, settings: Any
) -> None:
    """The embedded default has no beat: its main job sweeps (``arena_main``). A server
    stopped mid-tournament left one match done, one claimed with a game live, one pending."""
    import time

    settings.CELERY_TASK_ALWAYS_EAGER = True
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament, _matches = _one_match_done_one_orphaned_one_pending(alice, bots)
        assert services.tournament_sweep_in_process() == {"started": 1, "finalized": 0}
        for _ in range(1200):  # bounded: 120 s
            done = Tournament.objects.get(pk=tournament.pk)
            if done.finalized_at is not None:
                break
            time.sleep(0.1)
    assert_recorded_once(done)
    assert_consistent(done)


def test_the_embedded_sweep_leaves_a_fresh_claim_and_a_tournament_played_here(
    alice: Any, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with http_bots(alice, ["greedy", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        [match] = Match.objects.filter(tournament=tournament)
        assert services.match_claim(match_id=match.pk) is not None  # a live server's
        assert services.tournament_sweep_in_process() == {"started": 0, "finalized": 0}
        _claim_goes_stale(match)
        services._playing.add(tournament.pk)  # a thread of this process plays it
        try:
            assert services.tournament_sweep_in_process() == {"started": 0, "finalized": 0}
        finally:
            services._playing.discard(tournament.pk)


def test_the_main_job_sweeps_at_start_and_stops_when_told(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    import threading

    from arena.management.commands import arena_main

    settings.TOURNAMENT_SWEEP_SECONDS = 1
    swept = threading.Semaphore(0)
    monkeypatch.setattr(services, "tournament_sweep_in_process", lambda: swept.release())
    stop = threading.Event()
    thread = arena_main.start_sweeping(stop)
    assert swept.acquire(timeout=30) and swept.acquire(timeout=30)  # at start, then again
    stop.set()
    thread.join(30)
    assert not thread.is_alive()


def test_the_clock_sweep_leaves_a_claimed_matchs_games_to_their_worker(
    alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match worker stopped (or killed) mid-match: its games' stored turn clocks run out
    long before its claim goes stale. Their clock is the worker's: no sweep, clock task, read
    or bot turn in any other process may settle or play them (before: the sweep struck every
    seat awaited, and the bot turns it set off played the games on with strikes no bot
    earned). The match's takeover aborts them "interrupted" and deals them again."""
    settings.BOTS_RUNNER = "celery"  # as in production: a change sets off a bot_turn task
    dispatched: list[tuple[int, int]] = []
    monkeypatch.setattr(bot_tasks.bot_turn, "delay",
                        lambda game_id, version: dispatched.append((game_id, version)))
    bot_dispatch.forget()
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        token = services.match_claim(match_id=match.pk)
        assert token is not None
        with ExitStack() as driven_here, transaction.atomic():  # as the worker begins them
            begun = services.games_begin(match_id=match.pk, token=token, items=match.plan[:2])
            assert begun is not None
            for game, _ in begun:
                driven_here.enter_context(bot_runner.driving(game.pk))
        in_flight = [game.pk for game, _ in begun]
        # The worker stops here: its games' stored clocks run out, its claim is still fresh.
        Game.objects.filter(pk__in=in_flight).update(
            turn_deadline=timezone.now() - timedelta(seconds=60))
        before = _stand(in_flight)

        assert game_services.turn_clock_sweep() == 0
        api = client_for(alice)
        for game_id, version, _, _, _ in before[:len(in_flight)]:
            assert game_tasks.turn_clock_check(game_id, version) is False
            assert api.get(f"/api/games/{game_id}/events/").status_code == 200  # a lazy check
            assert advance(game_id, version) == bot_runner.SKIPPED
        assert _stand(in_flight) == before  # no clock move, no strike, version unchanged
        assert dispatched == []

        # The claim goes stale: the match is taken over, its games dealt again.
        _claim_goes_stale(match)
        assert services.match_play(match_id=match.pk) is True
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    for game in Game.objects.filter(pk__in=in_flight):
        assert (game.status, game.end_reason, game.move_count) == (
            GameStatus.ABORTED, "interrupted", 0)
        assert done.tournament_games.exclude(game=game).filter(game__seed=game.seed).exists()
    assert not TournamentGame.objects.filter(game_id__in=in_flight).exists()
    assert not Seat.objects.filter(game__tournament_game__tournament=done, strikes__gt=0).exists()


@contextmanager
def _stalled_at_its_first_bot_call(tournament: Tournament, *, later_calls_take: float = 0.0
                                   ) -> Iterator[Match]:
    """The tournament's one match played by a worker thread here, whose event loop stops at
    its first bot call until the block ends (``later_calls_take``: each later call's delay):
    the block acts on the games in flight. Yields the match."""
    stalled, released = threading.Event(), threading.Event()

    def stall_once(url: str, body: Any) -> None:
        if not stalled.is_set():
            stalled.set()
            released.wait(60)
        elif later_calls_take:
            time.sleep(later_calls_take)

    services.tournament_start(tournament_id=tournament.pk, user=tournament.owner,
                              dispatch=False)
    match = Match.objects.select_related("tournament").get(tournament=tournament)
    token = services.match_claim(match_id=match.pk)
    assert token is not None
    worker = threading.Thread(target=MatchRun(match, token, answer=stall_once).run)
    worker.start()
    try:
        assert stalled.wait(60)
        yield match
    finally:
        released.set()
        worker.join(120)
    assert not worker.is_alive()


def _first_game_in_flight(match: Match) -> Game:
    return Game.objects.get(pk=sorted(Match.objects.get(pk=match.pk).live.values())[0])


def test_a_game_changed_under_its_match_worker_is_aborted_interrupted_and_dealt_again(
    alice: Any,
) -> None:
    """The worker finds a game changed while it played it, and the game still running (the
    old clock sweep did this): it is not staff's abort. It is aborted "interrupted", not
    recorded, and the match's takeover deals it again (before: aborted "staff" and recorded
    in the tournament as played)."""
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        with _stalled_at_its_first_bot_call(tournament) as match:
            changed = _first_game_in_flight(match)
            # Someone else moves the game on while the worker holds it in memory.
            assert game_services.seat_default(
                game_id=changed.pk, seat=changed.awaiting, expected_version=changed.version,
                reason="timeout") is True
        changed.refresh_from_db()
        assert (changed.status, changed.end_reason) == (GameStatus.ABORTED, "interrupted")
        assert not TournamentGame.objects.filter(game=changed).exists()
        left = Match.objects.get(pk=match.pk)
        assert left.status == MatchStatus.RUNNING and changed.pk in left.live.values()
        # Its claim goes stale (a game unrecorded): the next worker deals the game again.
        _claim_goes_stale(match)
        assert services.match_play(match_id=match.pk) is True
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    assert done.tournament_games.filter(game__seed=changed.seed).exclude(game=changed).exists()
    assert not Game.objects.filter(end_reason="staff").exists()


def test_a_game_staff_abort_during_a_tournament_is_recorded_and_moves_no_rating(
    alice: Any,
) -> None:
    """The admin's "Abort the selected games" on a tournament's game in play. Before: it was
    recorded and rated by the cards each side held when the abort came (a full K of Elo)."""
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        with _stalled_at_its_first_bot_call(tournament) as match:
            aborted = _first_game_in_flight(match)
            game_services.game_abort(game_id=aborted.pk)  # what the admin's action calls
    assert services.tournament_finalize(tournament_id=tournament.pk)  # (match_play's part)
    done = Tournament.objects.get(pk=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    record = TournamentGame.objects.get(game=aborted)
    assert (record.result["end_reason"], record.result["rated"]) == ("staff", False)
    assert not RatingChange.objects.filter(game_id=aborted.pk).exists()
    others = done.tournament_games.exclude(game=aborted)
    assert RatingChange.objects.count() == 2 * others.count()
    assert sum(row["games"] for row in done.bradley_terry["ratings"]) == 2 * others.count()


def test_a_game_whose_bots_are_all_disabled_mid_game_moves_no_rating(alice: Any) -> None:
    """Both bots disabled while their games play: struck out one at a time, the last seat
    standing won, and the game was rated (a review of the fix for tables disabled at the
    start). Now a win by forfeit of a bot itself disabled moves no rating."""
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        # Later calls slow enough that the driver reads the bots again (every 2 s) mid-game.
        with _stalled_at_its_first_bot_call(tournament, later_calls_take=0.15):
            Bot.objects.filter(pk__in=[bot.pk for bot in bots]).update(enabled=False)
    assert services.tournament_finalize(tournament_id=tournament.pk)
    done = Tournament.objects.get(pk=tournament.pk)
    assert_consistent(done)
    for record in done.tournament_games.all():
        assert record.result["end_reason"] == "forfeit"
        assert record.result["rated"] is False, record.result
        assert not RatingChange.objects.filter(game_id=record.game_id).exists()


def test_a_matchs_last_game_recorded_counts_the_match_done_in_the_same_write(alice: Any) -> None:
    """Progress never reads every game played and a match still to go: the last game's record
    counts the match done, before its worker ends the match."""
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament, match, token, finished = _games_played_under_a_claim(
            alice, bots, games_per_pairing=2, games=2)
        assert records.games_record(match_id=match.pk, token=token, finished=finished[:1]) == 1
        assert Tournament.objects.get(pk=tournament.pk).matches_done == 0
        assert records.games_record(match_id=match.pk, token=token, finished=finished[1:]) == 1

        seen = Tournament.objects.get(pk=tournament.pk)  # the match not ended yet
        assert Match.objects.get(pk=match.pk).status == MatchStatus.RUNNING
        assert (seen.games_done, seen.matches_done) == (seen.games_total, seen.matches_total)
        assert services.match_end(match_id=match.pk, token=token, cancelled=False)
        ended = Tournament.objects.get(pk=tournament.pk)
        assert ended.matches_done == ended.matches_total == 1  # counted once
        assert Match.objects.get(pk=match.pk).status == MatchStatus.DONE


def test_a_worker_that_finds_its_claim_lost_stops_its_games_in_flight_at_once(
    alice: Any, settings: Any
) -> None:
    """The match's new worker deals the games in flight again from their seeds: the old one
    playing them on meanwhile (until the end, when nobody changed them) would play the same
    deck in two games at a time, and a bot in one would see what its opponent draws in the
    other (a review). It stops them at the heartbeat that finds the claim gone."""
    import time

    from bots.transport import CallResult

    settings.TOURNAMENT_HEARTBEAT_SECONDS = 1
    turns: list[float] = []

    def answer(_url: str, payload: Any) -> CallResult:
        if payload["type"] != "turn":
            return CallResult(True, 204, None, 0.1, None, "")
        turns.append(time.monotonic())
        time.sleep(0.01)
        return CallResult(True, 200, {"move": payload["legal_moves"][0]}, 0.1, None, "")

    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, options={}, games_per_pairing=2)  # to 500
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        [match] = Match.objects.filter(tournament=tournament)
        token = services.match_claim(match_id=match.pk)
        assert token is not None
        run = MatchRun(Match.objects.select_related("tournament").get(pk=match.pk), token,
                       answer=answer)

        def play() -> None:
            try:
                run.run()
            finally:
                connection.close()  # this thread's: a test thread's is not closed for it

        playing = threading.Thread(target=play)
        playing.start()
        while len(turns) < 20:
            time.sleep(0.01)
        Match.objects.filter(pk=match.pk).update(claim_token="the-next-workers")  # taken over
        taken = time.monotonic()
        playing.join(60)
    assert not playing.is_alive()
    late = [t for t in turns if t > taken + settings.TOURNAMENT_HEARTBEAT_SECONDS + 1]
    assert not late, f"{len(late)} turns played after the claim was found lost"
    # Left running, live on the match: its next worker aborts them "interrupted" and deals
    # them again (not aborted here as a game its turn bound stopped, which would count).
    games = Game.objects.filter(pk__in=Match.objects.get(pk=match.pk).live.values())
    assert games.count() == 2
    assert set(games.values_list("status", flat=True)) == {GameStatus.RUNNING}
