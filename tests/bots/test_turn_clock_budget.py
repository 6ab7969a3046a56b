"""A live table's turn clock and a bot's budget: the clock starts when the previous move commits,
before the server gets to the bot's call, so the call's ``budget_ms`` is what is left of the
clock less the server's own margin. A bot answering within the budget it was given is never
beaten by the clock; when the server itself is too slow and the clock does play the seat, the
call log says ``clock``, not ``stale``. Real bot servers on 127.0.0.1, the real wall clock."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bots import runner
from bots.models import BotCall
from bots.selectors import counters
from bots.transport import BotTransport
from games.models import EventKind, Game, GameEvent, Seat
from tests.bots.fault_server import FaultServer
from tests.bots.helpers import bot_table, register
from tests.games.conftest import FakeClock, fake_clock  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

PICKUP_DELAY = 0.3  # how long after the commit the worker gets to the turn


@pytest.fixture(autouse=True)
def _one_second_turns(settings: Any) -> None:
    settings.BOTS_RUNNER = "off"  # the test plays each decision itself
    settings.BOTS_TURN_TIMEOUT_MS = 1000


def _table(alice: Any, url: str) -> Game:
    bots = [register(alice, f"thinker{i}", url)[0] for i in range(2)]
    return bot_table(alice, bots, turn_seconds=1)


def _turn_calls(server: FaultServer) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests if r.body and r.json().get("type") == "turn"]


def test_it_never_strikes_a_bot_answering_just_inside_its_budget_on_a_one_second_table(
    alice: Any, transport: BotTransport
) -> None:
    with FaultServer(mode="budget") as server:  # answers 70 ms before its budget runs out
        game = _table(alice, server.url)
        for _ in range(3):
            time.sleep(PICKUP_DELAY)
            version = Game.objects.get(pk=game.pk).version
            assert runner.play_turn(game.pk, version, transport=transport) == runner.MOVED
        budgets = [call["budget_ms"] for call in _turn_calls(server)]
    assert len(budgets) == 3
    # What was left of the 1 s clock, less the margin: never the whole second.
    assert all(budget <= 1000 - PICKUP_DELAY * 1000 - runner.CLOCK_MARGIN_MS
               for budget in budgets), budgets
    assert not GameEvent.objects.filter(game_id=game.pk, kind=EventKind.STRIKE).exists()
    assert sum(Seat.objects.filter(game_id=game.pk).values_list("strikes", flat=True)) == 0
    assert list(BotCall.objects.filter(game_id=game.pk, kind="turn")
                .values_list("outcome", flat=True)) == ["move"] * 3


@pytest.mark.parametrize("mode", ["ok", "hang"])  # the answer is in, or the call timed out
def test_it_logs_the_clocks_strike_as_clock_when_the_server_itself_was_too_slow(
    alice: Any, transport: BotTransport, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    judged = runner.judge

    def stalled(result: Any) -> Any:  # the server stalls after the call, past the clock
        time.sleep(0.8)
        return judged(result)

    monkeypatch.setattr(runner, "judge", stalled)
    with FaultServer(mode=mode) as server:
        game = _table(alice, server.url)
        time.sleep(PICKUP_DELAY)
        version, seat = Game.objects.values_list("version", "awaiting").get(pk=game.pk)
        assert runner.play_turn(game.pk, version, transport=transport) == runner.CLOCK
    call = BotCall.objects.get(game_id=game.pk, kind="turn")
    assert call.outcome == "clock" and call.error == ("timeout" if mode == "hang" else "")
    strike = GameEvent.objects.get(game_id=game.pk, kind=EventKind.STRIKE)
    assert strike.seat == seat and strike.data["reason"] == "clock"  # the clock's strike
    assert Seat.objects.get(game_id=game.pk, index=seat).strikes == 1
    assert counters(bot=call.bot).get("strike:clock") == 1  # /stats/ counts it as the clock's


def test_it_leaves_the_decision_to_the_clock_when_no_time_is_left_for_the_call(
    alice: Any, transport: BotTransport, fake_clock: FakeClock  # noqa: F811
) -> None:
    with FaultServer(mode="ok") as server:
        game = _table(alice, server.url)
        fake_clock.advance(1 - (runner.CLOCK_MARGIN_MS - 50) / 1000)  # less than the margin
        version = Game.objects.get(pk=game.pk).version
        assert runner.play_turn(game.pk, version, transport=transport) == runner.CLOCK
        assert _turn_calls(server) == []  # not called with a budget it could not meet
    call = BotCall.objects.get(game_id=game.pk, kind="turn")
    assert (call.outcome, call.status, call.error) == ("clock", None, "")
    assert Game.objects.get(pk=game.pk).version > version


def test_a_driven_all_bot_game_gives_each_decision_the_whole_budget_and_no_clock_strikes(
    alice: Any, transport: BotTransport
) -> None:
    # A tournament's games are played in memory by bots.driver: the stored clock is not the
    # decision's, so each call has the whole budget (the table's second), and no clock beats it.
    with FaultServer(mode="budget") as server:
        game = _table(alice, server.url)
        runner.play_game(game.pk, transport=transport, max_turns=3, notices=False)
        budgets = [call["budget_ms"] for call in _turn_calls(server)]
    assert budgets == [1000] * 3
    assert sum(Seat.objects.filter(game_id=game.pk).values_list("strikes", flat=True)) == 0
    assert list(BotCall.objects.filter(game_id=game.pk, kind="turn")
                .values_list("outcome", flat=True)) == ["move"] * 3
