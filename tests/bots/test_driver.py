"""The in-memory driver (``bots.driver``): every way a bot can fail a decision gives the
default move, a strike with its reason and a call-log entry, as on the per-move path; many
games play at once on one loop and each is recorded whole; stopping, and a change made by
someone else meanwhile, leave consistent rows. Real bot servers on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import OperationalError

from bots import runner
from bots import services as bot_services
from bots.driver import Driver
from bots.models import Bot, BotCall
from bots.serve import serve_in_thread
from bots.transport import BotTransport, CallResult
from games import memory
from games import services as game_services
from games import uno as engine
from games.models import Game, GameStatus, MoveRecord, MoveSource, Seat
from tests.bots.fault_server import FaultServer, refused_url
from tests.bots.helpers import bot_table, register
from tests.bots.test_runner_faults import (
    FAULTS,
    _assert_forfeited_once,
    _assert_struck,
    _assert_struck_once,
    _fault_table,
    _illegal,
    _silent_table,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_bots")]


@pytest.fixture
def reference_bots(settings: Any, two_reference_bots: list[Any]) -> list[Any]:
    """Two greedy reference bots, given time enough that a busy machine strikes nobody."""
    settings.BOTS_TURN_TIMEOUT_MS = 5000
    return two_reference_bots


def _one_decision(game: Game, transport: BotTransport) -> tuple[int, int]:
    version, seat = game.version, game.awaiting
    with Driver(transport=transport, notices=False, max_turns=1) as driver:
        [outcome] = driver.play([game.pk])
    assert outcome.recorded and outcome.error is None
    return version, seat


@pytest.mark.parametrize(("mode", "reason"), FAULTS)
def test_each_failure_mode_over_the_driver_gives_the_default_move_a_strike_and_a_log_entry(
    alice: Any, fault_bot: FaultServer, transport: BotTransport, mode: str, reason: str
) -> None:
    bots, game = _fault_table(alice, fault_bot, mode)
    version, seat = _one_decision(game, transport)
    _assert_struck_once(bots[seat], game.pk, seat, version, reason)


def test_a_refused_connection_over_the_driver_is_a_connect_strike(
    alice: Any, transport: BotTransport
) -> None:
    url, holder = refused_url()
    try:
        bots = [register(alice, f"r{i}", url)[0] for i in range(2)]
        game = bot_table(alice, bots)
        version, seat = _one_decision(game, transport)
    finally:
        holder.close()
    _assert_struck(game.pk, seat, version, "connect")


def test_an_illegal_move_over_the_driver_is_an_illegal_strike(
    alice: Any, transport: BotTransport
) -> None:
    registered = [register(alice, f"i{i}", "http://127.0.0.1:9/") for i in range(2)]
    url, stop = serve_in_thread(_illegal, [secret for _, secret in registered])
    try:
        bots = [bot_services.bot_update(bot=bot, data={"url": url}) for bot, _ in registered]
        game = bot_table(alice, bots)
        version, seat = _one_decision(game, transport)
    finally:
        stop()
    _assert_struck(game.pk, seat, version, "illegal")
    assert BotCall.objects.get(game_id=game.pk, version=version).detail  # the engine's why


def test_a_disabled_bot_is_struck_without_a_call(alice: Any, fault_bot: FaultServer,
                                                  transport: BotTransport) -> None:
    bots = [register(alice, f"d{i}", fault_bot.url_for("ok"))[0] for i in range(2)]
    game = bot_table(alice, bots)
    for bot in bots:
        bot_services.bot_update(bot=bot, data={"enabled": False})
    version, seat = _one_decision(game, transport)
    _assert_struck(game.pk, seat, version, "disabled")
    assert not fault_bot.requests  # nobody was called
    # A call never made has no latency, and is no call: the figures leave it out (they
    # showed a p50 of 0.0 ms and counted the struck decisions as calls).
    struck = BotCall.objects.get(game_id=game.pk, version=version)
    assert struck.latency_ms is None
    from bots import selectors

    bot = Bot.objects.get(pk=struck.bot_id)
    assert selectors.latency(bot=bot) == {"p50_ms": None, "p99_ms": None, "window": 0}
    assert selectors.latencies(bot_ids=[bot.pk])[bot.pk]["window"] == 0
    assert "calls" not in selectors.counters(bot=bot)


def test_many_games_play_at_once_and_each_is_recorded_whole(
    settings: Any, alice: Any, reference_bots: list[Any], transport: BotTransport
) -> None:
    settings.BOTS_CALL_LOG_KEEP = 100_000  # every call stays in the log to be checked
    games = [bot_table(alice, reference_bots, options={"target_score": 100})
             for _ in range(4)]
    with Driver(transport=transport) as driver:
        outcomes = driver.play([game.pk for game in games])
    for game, outcome in zip(games, outcomes, strict=True):
        assert outcome.recorded and outcome.finished and outcome.error is None
        final = Game.objects.get(pk=game.pk)
        assert final.status == GameStatus.FINISHED and final.end_reason == "match"
        moves = list(MoveRecord.objects.filter(game=final).order_by("number"))
        assert [m.number for m in moves] == list(range(1, final.move_count + 1))
        assert all(m.source == MoveSource.PLAYER for m in moves) and len(moves) == outcome.turns
        turns = BotCall.objects.filter(game=final, kind="turn", outcome="move")
        assert {c.version for c in turns} == {m.version - 1 for m in moves}
        state = engine.replay(engine.Options.from_json(final.options), final.seed,
                              [(m.seat, engine.Move.from_json(m.move)) for m in moves])
        assert state.finished and state.winner == final.winner and state.scores == final.scores
        for bot in reference_bots:
            for kind in ("start", "end"):
                assert BotCall.objects.filter(bot=bot, game=final, kind=kind, error="").count() == 1


def test_a_stopped_driver_records_each_game_as_it_stands(
    alice: Any, reference_bots: list[Any], transport: BotTransport
) -> None:
    game = bot_table(alice, reference_bots, options={"target_score": 100})
    driver = Driver(transport=transport, notices=False, max_turns=7)
    [outcome] = driver.play([game.pk])
    driver.close()
    stored = Game.objects.get(pk=game.pk)
    assert outcome.recorded and stored.status == GameStatus.RUNNING
    assert stored.move_count == 7 and stored.turn_deadline is not None
    # Another driver (or the per-move path) takes it from there.
    final = runner.play_game(game.pk, transport=transport, notices=False)
    assert final.status == GameStatus.FINISHED
    assert list(MoveRecord.objects.filter(game=final).values_list("number", flat=True)
                ) == list(range(1, final.move_count + 1))


def test_a_game_changed_meanwhile_is_not_overwritten(
    alice: Any, reference_bots: list[Any], transport: BotTransport
) -> None:
    game = bot_table(alice, reference_bots, options={"target_score": 100})
    with Driver(transport=transport, notices=False, max_turns=5) as driver:
        driver.submit(game.pk)
        # Staff abort it while the driver plays: the driver cannot record before we ask.
        game_services.game_abort(game_id=game.pk)
        [outcome] = list(driver.results())
    assert not outcome.recorded
    stored = Game.objects.get(pk=game.pk)
    assert stored.status == GameStatus.ABORTED and stored.end_reason == "staff"
    assert not MoveRecord.objects.filter(game=stored).exists()


def test_a_bot_that_never_answers_is_forfeited_through_the_driver(
    alice: Any, fault_bot: FaultServer, transport: BotTransport
) -> None:
    silent, _player, game = _silent_table(alice, fault_bot)
    with Driver(transport=transport) as driver:
        [outcome] = driver.play([game.pk])
    assert outcome.finished
    seat = _assert_forfeited_once(game.pk, silent)
    assert outcome.game is not None and outcome.game.winner == 1 - seat.index
    # Each bot's notices name its own seat; the end notice's replay (made in memory) is the
    # stored game's.
    notices = [r.json() for r in fault_bot.requests if r.json().get("type") in ("start", "end")]
    assert sorted((n["type"], n["seat"]) for n in notices) == [
        ("end", 0), ("end", 1), ("start", 0), ("start", 1)]
    ends = [n["replay"] for n in notices if n["type"] == "end"]
    stored = runner.notice_body(game=Game.objects.get(pk=game.pk), kind="end",
                                seats=list(Seat.objects.filter(game_id=game.pk)))
    assert ends == [stored["replay"]] * 2


def _first_legal(_url: str, payload: Any) -> CallResult:
    """An in-process bot: the first legal move, at once (no HTTP)."""
    return CallResult(True, 200, {"move": payload["legal_moves"][0]}, 0.1, None, "")


def test_games_recorded_together_are_recorded_one_by_one_when_the_joint_write_fails(
    alice: Any, reference_bots: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games whose records are asked while the caller is busy are written in one transaction
    (``memory.stretches_record``); if that write fails (the database refused it), each game
    is written on its own and none is lost."""
    joint: list[int] = []
    write = memory.stretches_record

    def refused_together(*, played: list[Any]) -> list[bool]:
        if len(played) == 1:  # a game on its own (``stretch_record``) is written
            return write(played=played)
        joint.append(len(played))
        raise OperationalError("the joint write was refused")

    monkeypatch.setattr(memory, "stretches_record", refused_together)
    games = [bot_table(alice, reference_bots) for _ in range(4)]
    with Driver(notices=False, max_turns=3, answer=_first_legal) as driver:
        for game in games:
            driver.submit(game.pk)
        time.sleep(0.3)  # every game has played its 3 turns and asked to be recorded
        outcomes = list(driver.results())
    assert joint and max(joint) > 1  # the joint write was tried, with several games
    assert all(o.recorded and o.error is None for o in outcomes)
    for game in games:
        stored = Game.objects.get(pk=game.pk)
        assert stored.move_count == game.move_count + 3
        assert MoveRecord.objects.filter(game=stored).count() == stored.move_count


def test_stopping_one_group_leaves_the_others_games_playing(
    alice: Any, reference_bots: list[Any]
) -> None:
    """A tournament's worker plays several matches through one driver and stops only the
    games of a match whose claim it lost (``stop(group=...)``)."""
    stopped = [bot_table(alice, reference_bots) for _ in range(2)]
    playing = [bot_table(alice, reference_bots) for _ in range(2)]
    with Driver(notices=False, answer=_first_legal) as driver:
        driver.stop(group="lost")
        for game in stopped:
            driver.submit(game.pk, group="lost")
        for game in playing:
            driver.submit(game.pk, group="kept")
        outcomes = {o.game_id: o for o in driver.results()}
    for game in stopped:
        assert outcomes[game.pk].recorded and not outcomes[game.pk].finished
        assert outcomes[game.pk].turns == 0
        assert Game.objects.get(pk=game.pk).status == GameStatus.RUNNING
    for game in playing:
        assert outcomes[game.pk].finished
        assert Game.objects.get(pk=game.pk).status == GameStatus.FINISHED
