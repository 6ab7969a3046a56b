"""Tournaments played in this process (the embedded default's way, and the commands'): real
HTTP reference bots on 127.0.0.1, real games, the stored results checked against the ratings
modules."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from arena import records, selectors, services
from arena.models import (
    Match,
    MatchStatus,
    RatingChange,
    Tournament,
    TournamentGame,
    TournamentStatus,
)
from bots import driver
from bots.models import Bot
from bots.transport import CallResult
from games.models import EventKind, GameEvent
from tests.arena.tournament_helpers import (
    assert_consistent,
    assert_recorded_once,
    http_bots,
    rank,
    tournament_of,
)
from tests.bots.fault_server import FaultServer
from tests.bots.helpers import close_default_transport
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _bots_played_here(settings: Any) -> Iterator[None]:
    settings.BOTS_ALLOW_PRIVATE = True
    settings.BOTS_RUNNER = "off"
    yield
    close_default_transport()


def test_a_round_robin_of_four_http_bots_is_recorded_once_and_rated(
    alice: Any, settings: Any
) -> None:
    settings.TOURNAMENT_MATCH_CONCURRENCY = 1  # a fixed order of the bots' seeded choices
    with http_bots(alice, ["random", "greedy", "heuristic", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=12)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        seen: list[int] = []
        done = services.tournament_run_foreground(
            tournament_id=tournament.pk, on_progress=lambda t: seen.append(t.games_done))
    assert done.status == TournamentStatus.FINISHED
    assert seen == list(range(1, 73))  # progress after every game
    assert_recorded_once(done)
    assert_consistent(done)
    assert rank(done, bots[2]) < rank(done, bots[0]) and rank(done, bots[3]) < rank(done, bots[0])
    board = selectors.leaderboard(rule_set=done.rule_set)
    assert [row["elo"] for row in board] == sorted((row["elo"] for row in board), reverse=True)
    assert {row["bot"] for row in board} == {b.pk for b in bots}
    assert all(row["games"] == 36 and row["interval"] is not None for row in board)
    history = selectors.rating_history(bot=bots[0], rule_set=done.rule_set)
    assert history.count() == 36
    assert list(history)[-1].after == pytest.approx(
        next(row["elo"] for row in board if row["bot"] == bots[0].pk), abs=0.05)
    progress = selectors.tournament_progress(tournament=done)
    assert progress["games_done"] == progress["games_total"] == 72
    assert progress["matches_done"] == progress["matches_total"] == 6
    assert selectors.tournament_standings(tournament=done) == done.standings


def test_every_user_lists_a_tournaments_games_and_reads_their_replays(
    alice: Any, charlie: Any
) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        services.tournament_run_foreground(tournament_id=tournament.pk)
    played = list(TournamentGame.objects.filter(tournament=tournament).order_by("number"))
    assert len(played) == 2
    listed = client_for(charlie).get(f"/api/tournaments/{tournament.pk}/games/").json()
    assert listed["count"] == 2
    assert [(g["number"], g["game"], g["bots"], g["winner"]) for g in listed["results"]] == [
        (one.number, one.game_id, one.seats, one.game.winner) for one in played]
    for persona in (alice, charlie):  # the owner of both bots, and someone with no bot in it
        for one in played:
            replay = client_for(persona).get(f"/api/games/{one.game_id}/replay/")
            assert replay.status_code == 200, replay.json()
            assert replay.json()["seed"] == one.game.seed


def test_a_running_tournaments_replays_are_held_from_everyone_until_it_ends(
    alice: Any, charlie: Any
) -> None:
    # Every seating of a duplicate deal has the same seed: the replay of one played game would
    # show the hands of its twin still being played, to its bots' owner and to anyone else.
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first = Match.objects.filter(tournament=tournament).order_by("number").first()
        assert first is not None and services.match_play(match_id=first.pk, chain=False)
        assert Tournament.objects.get(pk=tournament.pk).status == TournamentStatus.RUNNING
        played = list(TournamentGame.objects.filter(tournament=tournament))
        assert played and all(one.game.is_over for one in played)
        for persona in (alice, charlie):
            for one in played:
                held = client_for(persona).get(f"/api/games/{one.game_id}/replay/")
                assert held.status_code == 409 and held.json()["code"] == "replay_held"
                assert "seed" not in held.json()
        services.tournament_run_foreground(tournament_id=tournament.pk)
    for one in played:
        assert client_for(charlie).get(f"/api/games/{one.game_id}/replay/").status_code == 200


def test_a_cancelled_tournaments_replays_stay_held_until_its_running_matches_end(
    alice: Any, charlie: Any
) -> None:
    """A cancel lets a running match finish the games it is playing: their twins' replays
    (same seed) opened at the cancel while those games were still in play (an organiser's
    review), and so did a game that had ended but was not yet recorded by its match."""
    from bots import runner as bot_runner

    def replay_status(game_id: int, persona: Any = charlie) -> int:
        return client_for(persona).get(f"/api/games/{game_id}/replay/").status_code

    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first, second = Match.objects.filter(tournament=tournament).order_by("number")[:2]
        assert services.match_play(match_id=first.pk, chain=False)
        recorded = list(TournamentGame.objects.filter(tournament=tournament))
        token = services.match_claim(match_id=second.pk)  # a worker plays the second match
        assert token is not None
        item = second.plan[0]
        [(in_play, _)] = services.games_begin(match_id=second.pk, token=token, items=[item])
        ended = bot_runner.play_game(in_play.pk)
        assert ended.is_over  # ended, not yet recorded by its match

        services.tournament_cancel(tournament_id=tournament.pk, user=alice)
        cancelled = Tournament.objects.get(pk=tournament.pk)
        assert cancelled.finalized_at is None
        # The game in play finishes and counts: not dropped, then or later.
        dropped = cancelled.games_total - cancelled.games_done - 1
        assert cancelled.games_dropped == dropped
        assert [replay_status(one.game_id) for one in recorded] == [409] * len(recorded)
        assert replay_status(ended.pk, alice) == 409  # its bots' owner

        records.games_record(match_id=second.pk, token=token,
                             finished=[(item["number"], ended.pk)])
        assert services.match_end(match_id=second.pk, token=token, cancelled=True)
        assert services.tournament_finalize(tournament_id=tournament.pk)
        assert Tournament.objects.get(pk=tournament.pk).games_dropped == dropped
    for game_id in [one.game_id for one in recorded] + [ended.pk]:
        assert replay_status(game_id) == 200


def test_a_game_recorded_between_the_holds_two_reads_stays_held(alice: Any) -> None:
    """``replay_held`` reads the running matches' live games first, then the records. A
    game's record and its leaving ``live`` commit together, so a record landing between the
    two reads is seen by the second. (In the other order such a game was in neither, and its
    replay opened while its tournament ran.) The record is made to land right after the
    first read."""
    from django.db import connection

    from bots import runner as bot_runner
    from games.models import Game

    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        [match] = Match.objects.filter(tournament=tournament)
        token = services.match_claim(match_id=match.pk)
        assert token is not None
        item = match.plan[0]
        [(in_play, _)] = services.games_begin(match_id=match.pk, token=token, items=[item])
        ended = Game.objects.get(pk=bot_runner.play_game(in_play.pk).pk)
        assert ended.is_over

        between: list[str] = []

        def record_after_the_first_read(execute: Any, sql: str, *args: Any) -> Any:
            result = execute(sql, *args)
            if not between:
                between.append(sql)
                records.games_record(match_id=match.pk, token=token,
                                     finished=[(item["number"], ended.pk)])
            return result

        with connection.execute_wrapper(record_after_the_first_read):
            held = selectors.replay_held(ended)
        assert between, "replay_held read nothing"
        assert TournamentGame.objects.filter(game=ended).exists()
        assert ended.pk not in selectors.games_in_flight()
        assert held


def test_a_tournaments_end_notices_carry_no_replay(alice: Any) -> None:
    notices: list[dict[str, Any]] = []

    def answer(_url: str, payload: Any) -> CallResult:
        if payload["type"] != "turn":
            notices.append(payload)
            return CallResult(True, 204, None, 0.1, None, "")
        return CallResult(True, 200, {"move": payload["legal_moves"][0]}, 0.1, None, "")

    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=2, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        driver.answer_in_process(answer)
        try:
            services.tournament_run_foreground(tournament_id=tournament.pk)
        finally:
            driver.answer_in_process(None)
    ends = [n for n in notices if n["type"] == "end"]
    assert len(ends) == 2 * 2  # two games, two bots each
    assert all("replay" in n and n["replay"] is None for n in ends)
    assert all(n["result"]["winner"] is not None for n in ends)


def test_the_seatings_of_a_duplicate_deal_are_never_played_side_by_side(
    alice: Any, settings: Any, monkeypatch: Any
) -> None:
    """In the twin game of a duplicate deal a bot holds the hand its opponent holds in the
    first: played side by side (a match plays 8 games at a time), a bot could read its
    opponent's hand live from its own (a security review). A deal's seatings follow one
    another; different deals still run side by side. Real HTTP bots: the calls' times say
    which games were in play together."""
    import json

    from bots.transport import BotTransport
    from games.models import Game

    settings.TOURNAMENT_MATCH_CONCURRENCY = 8
    turns: dict[int, list[float]] = {}
    post_body = BotTransport.post_body

    async def noted(self: Any, url: str, body: bytes, **kwargs: Any) -> Any:
        payload = json.loads(body)
        if payload["type"] == "turn":
            turns.setdefault(payload["game"], []).append(time.perf_counter())
        return await post_body(self, url, body, **kwargs)

    monkeypatch.setattr(BotTransport, "post_body", noted)
    with http_bots(alice, ["random", "random"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=8, duplicate_deals=True)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        services.tournament_run_foreground(tournament_id=tournament.pk)
    seeds = dict(Game.objects.filter(pk__in=turns).values_list("pk", "seed"))
    spans = {game_id: (min(times), max(times)) for game_id, times in turns.items()}

    def overlap(a: int, b: int) -> bool:
        return spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]

    pairs = [(a, b) for a in spans for b in spans if a < b]
    assert len(set(seeds.values())) == 4 and len(spans) == 8
    assert not [(a, b) for a, b in pairs if seeds[a] == seeds[b] and overlap(a, b)]
    assert any(overlap(a, b) for a, b in pairs if seeds[a] != seeds[b])


def test_the_finalizer_runs_once(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        services.tournament_run_foreground(tournament_id=tournament.pk)
    first = Tournament.objects.get(pk=tournament.pk).finalized_at
    assert first is not None
    assert services.tournament_finalize(tournament_id=tournament.pk) is False
    assert Tournament.objects.get(pk=tournament.pk).finalized_at == first


def test_a_played_match_is_not_played_again(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        assert services.match_play(match_id=match.pk) is True
        changes = RatingChange.objects.count()
        assert services.match_play(match_id=match.pk) is False
    assert RatingChange.objects.count() == changes
    assert_recorded_once(Tournament.objects.get(pk=tournament.pk))


def test_the_progress_moves_as_games_end_not_only_when_a_batch_is_full(
    alice: Any, settings: Any, monkeypatch: Any
) -> None:
    """Ended games are recorded for the tournament together, but no later than
    PROGRESS_WITHIN_SECONDS after the first of them ended (at 0: as they end), so with slow bots
    the progress moves game by game, not once per match."""
    from arena import runner

    settings.TOURNAMENT_MATCH_CONCURRENCY = 4
    monkeypatch.setattr(runner, "PROGRESS_WITHIN_SECONDS", 0.0)
    with http_bots(alice, ["random", "greedy"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=4)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)
        seen: list[int] = []

        def progress() -> None:
            seen.append(Tournament.objects.get(pk=tournament.pk).games_done)

        assert services.match_play(match_id=match.pk, on_progress=progress) is True
    assert len(seen) >= 2 and seen == sorted(seen) and seen[-1] == 4, seen
    assert_recorded_once(Tournament.objects.get(pk=tournament.pk))


def test_a_disabled_bot_forfeits_its_games(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        Bot.objects.filter(pk=bots[2].pk).update(enabled=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    for record in done.tournament_games.all():
        if bots[2].pk in record.seats:
            seat = record.seats.index(bots[2].pk)
            assert record.result["forfeited"] == [seat]
            assert record.result["winner"] == 1 - seat
            forfeited = GameEvent.objects.get(game_id=record.game_id, kind=EventKind.FORFEITED)
            assert (forfeited.seat, forfeited.data) == (seat, {"reason": "disabled"})
    line = next(row for row in done.standings if row["bot"] == bots[2].pk)
    assert line["forfeits"] == 4 and line["wins"] == 0


def test_a_table_of_disabled_bots_has_no_winner_and_moves_no_rating(alice: Any) -> None:
    """Before: their seats were forfeited one by one, so the last of them was the last one
    standing and won (+8 Elo, a win in the standings) for a bot that never played."""
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        Bot.objects.filter(pk__in=[bots[0].pk, bots[1].pk]).update(enabled=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert_recorded_once(done)
    assert_consistent(done)
    between = [r for r in done.tournament_games.all() if bots[2].pk not in r.seats]
    assert len(between) == 2
    for record in between:
        assert (record.result["winner"], record.result["forfeited"]) == (None, [0, 1])
        assert record.result["rated"] is False
        assert not RatingChange.objects.filter(game_id=record.game_id).exists()
    for record in done.tournament_games.exclude(pk__in=[r.pk for r in between]):
        assert record.result["rated"] is True  # one bot forfeited, the other won: rated
        assert RatingChange.objects.filter(game_id=record.game_id).count() == 2
    lines = {row["bot"]: row for row in done.standings}
    for disabled in bots[:2]:
        assert (lines[disabled.pk]["wins"], lines[disabled.pk]["forfeits"]) == (0, 4)


def test_a_bot_that_stops_answering_is_forfeited_and_the_tournament_ends(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, max_strikes=2)
        # The port nothing listens on: every call fails at once.
        Bot.objects.filter(pk=bots[0].pk).update(url="http://127.0.0.1:9/")
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
    assert_recorded_once(done)
    for record in done.tournament_games.all():
        seat = record.seats.index(bots[0].pk)
        assert seat in record.result["forfeited"]
        assert record.result["strikes"][seat] == 2
        forfeited = GameEvent.objects.get(game_id=record.game_id, kind=EventKind.FORFEITED)
        assert forfeited.data == {"reason": "strikes"}


def test_a_hung_bot_forfeits_the_rest_of_its_match_without_being_called(
        alice: Any, settings: Any) -> None:
    settings.TOURNAMENT_MATCH_CONCURRENCY = 1  # the games one after another
    with http_bots(alice, ["greedy", "random"]) as bots, FaultServer(mode="hang") as hung:
        Bot.objects.filter(pk=bots[1].pk).update(url=hung.url)  # takes calls, never answers
        tournament = tournament_of(alice, bots, games_per_pairing=8, max_strikes=2,
                                   turn_timeout_ms=200)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        done = services.tournament_run_foreground(tournament_id=tournament.pk)
        asked = sum(1 for request in hung.requests if request.json().get("type") == "turn")
    assert_recorded_once(done)
    assert_consistent(done)
    strikes, reasons = [], []
    for record in done.tournament_games.order_by("number"):
        seat = record.seats.index(bots[1].pk)
        assert record.result["forfeited"] == [seat] and record.result["winner"] == 1 - seat
        strikes.append(record.result["strikes"][seat])
        forfeited = GameEvent.objects.get(game_id=record.game_id, kind=EventKind.FORFEITED)
        reasons.append(forfeited.data["reason"])
    # Each forfeit says why: struck out, or found unresponsive (then not called at all).
    assert reasons == ["strikes" if n else "unresponsive" for n in strikes]
    # Struck out of its first games (2 unanswered calls each, 0.4 s at least in all: found
    # unresponsive), then forfeited as each later game began: no call, no strike.
    assert strikes[:1] == [2] and strikes[-5:] == [0] * 5
    assert asked == sum(strikes) <= 2 * 3


def test_cancelling_drops_the_matches_not_started(alice: Any) -> None:
    with http_bots(alice, ["greedy", "heuristic", "random"]) as bots:
        tournament = tournament_of(alice, bots)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        first = Match.objects.filter(tournament=tournament).order_by("number").first()
        assert first is not None
        services.match_play(match_id=first.pk, chain=False)  # one worker's match
        services.tournament_cancel(tournament_id=tournament.pk, user=alice)
        services.tournament_run_foreground(tournament_id=tournament.pk)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED
    statuses = list(tournament.matches.order_by("number").values_list("status", flat=True))
    assert statuses == [MatchStatus.DONE, MatchStatus.CANCELLED, MatchStatus.CANCELLED]
    assert tournament.games_done == 2 and tournament.tournament_games.count() == 2
    assert tournament.finalized_at is not None
    assert sum(row["games"] for row in tournament.standings) == 4


def test_a_running_match_stops_at_its_next_game_when_cancelled(alice: Any, settings: Any) -> None:
    settings.TOURNAMENT_MATCH_CONCURRENCY = 2
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots, games_per_pairing=8)
        services.tournament_start(tournament_id=tournament.pk, user=alice, dispatch=False)
        match = Match.objects.get(tournament=tournament)

        def cancel_after_a_game(t: Tournament) -> None:
            if t.status == TournamentStatus.RUNNING:
                services.tournament_cancel(tournament_id=t.pk, user=alice)

        services.tournament_run_foreground(tournament_id=tournament.pk,
                                           on_progress=cancel_after_a_game)
    match.refresh_from_db()
    tournament.refresh_from_db()
    assert match.status == MatchStatus.CANCELLED
    assert tournament.status == TournamentStatus.CANCELLED
    # The games in play when it was cancelled finish and count; no other starts. (Progress
    # comes a batch of TOURNAMENT_MATCH_CONCURRENCY ended games at a time, recorded before
    # any new game begins: the cancel lands with at most 3 begun of the 8 planned.)
    assert 1 <= tournament.games_done <= 3
    assert match.games_done == tournament.games_done == tournament.tournament_games.count()
    assert match.live == {}
    assert tournament.finalized_at is not None


def test_the_embedded_default_plays_a_started_tournament_in_the_background(
    alice: Any, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with http_bots(alice, ["greedy", "heuristic"]) as bots:
        tournament = tournament_of(alice, bots)
        started = services.tournament_start(tournament_id=tournament.pk, user=alice)
        assert started.status == TournamentStatus.RUNNING  # the request returns at once
        for _ in range(600):  # bounded: at most 60 s
            tournament.refresh_from_db()
            if tournament.finalized_at is not None:
                break
            time.sleep(0.1)
    assert tournament.status == TournamentStatus.FINISHED
    assert_recorded_once(tournament)
    assert_consistent(tournament)
