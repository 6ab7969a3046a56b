"""A driver reads its games' bots again every ``_BOTS_REFRESH_SECONDS``: a bot disabled or
given a new secret while its tournament games are in flight is treated accordingly in those
games too, not only in the games begun after (an outside bot writer's review: a rotation
mid-tournament struck the bot that switched to its new secret, and a disabled bot kept being
called until its games ended). Also: the call log and the events carry the time of the call
or event, not of the batch that wrote them. Real bot servers on 127.0.0.1."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from bots import driver as driver_module
from bots import services as bot_services
from bots.driver import Driver
from bots.models import Bot, BotCall
from bots.serve import serve_in_thread
from bots.strategies import STRATEGIES
from bots.transport import BotTransport
from games.models import Game, GameEvent, MoveRecord
from tests.bots.helpers import bot_table, register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("quick_bots")]


@pytest.fixture(autouse=True)
def quick_refresh(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    monkeypatch.setattr(driver_module, "_BOTS_REFRESH_SECONDS", 0.05)
    settings.BOTS_TURN_TIMEOUT_MS = 3000  # a busy machine strikes nobody for slowness


class Counted:
    """A greedy strategy that takes a little time and counts its calls by seat; ``when``
    runs ``then`` on a thread of its own once ``calls`` calls were made."""

    def __init__(self, calls: int, then: Callable[[], None]) -> None:
        self.seats: list[int] = []
        self.calls, self.then = calls, then
        self.thread = threading.Thread(target=then)

    def __call__(self, view: dict[str, Any], rng: random.Random) -> Any:
        self.seats.append(view["seat"])
        if len(self.seats) == self.calls:
            self.thread.start()
        time.sleep(0.01)
        return STRATEGIES["greedy"](view, rng)


def two_bots(alice: Any, strategy: Any, *, port: int = 0) -> tuple[list[Bot], list[str], Any]:
    registered = [register(alice, f"b{i}", "http://127.0.0.1:9/") for i in range(2)]
    secrets = [secret for _, secret in registered]
    url, stop = serve_in_thread(strategy, secrets, port=port)
    bots = [bot_services.bot_update(bot=bot, data={"url": url}) for bot, _ in registered]
    return bots, secrets, stop


def test_a_bot_disabled_during_its_game_is_called_no_more_in_it(
    alice: Any, transport: BotTransport
) -> None:
    disabled_at: list[int] = []

    def disable() -> None:
        Bot.objects.filter(pk=bots[0].pk).update(enabled=False)
        disabled_at.append(len(strategy.seats))

    strategy = Counted(6, disable)
    bots, _, stop = two_bots(alice, strategy)
    try:
        game = bot_table(alice, bots, options={"target_score": 500})
        with Driver(transport=transport, notices=False) as driver:
            [outcome] = driver.play([game.pk])
    finally:
        stop()
        strategy.thread.join()
    assert outcome.finished
    seat = next(s.index for s in Game.objects.get(pk=game.pk).seats.all() if s.bot_id == bots[0].pk)
    later = strategy.seats[disabled_at[0]:]
    # A few calls already on their way (the refresh is every 50 ms, a turn about 20 ms; a busy
    # CI once let 3 through), then none: not the hundreds left of a game to 500 points.
    assert later.count(seat) <= 5
    struck = BotCall.objects.filter(bot=bots[0], game_id=game.pk, error="disabled")
    assert struck.count() == 3  # max strikes: forfeited, the game ended
    assert Game.objects.get(pk=game.pk).end_reason == "forfeit"


def test_a_bot_that_switches_to_its_new_secret_mid_game_is_not_struck(
    alice: Any, transport: BotTransport
) -> None:
    """Rotate the first bot's secret, then restart its server knowing only the new one (and
    the second bot's): the calls after the restart carry both signatures."""
    restarted: list[Any] = []

    def rotate_then_restart() -> None:
        new = bot_services.bot_rotate_secret(bot=bots[0])
        time.sleep(0.3)  # several refreshes
        stop()
        _, again = two_bots_restart(new)
        restarted.append(again)

    def two_bots_restart(new: str) -> tuple[str, Any]:
        return serve_in_thread(strategy, [new, secrets[1]], port=port)

    strategy = Counted(6, rotate_then_restart)
    bots, secrets, stop = two_bots(alice, strategy)
    port = int(bots[0].url.rsplit(":", 1)[1].strip("/"))
    try:
        game = bot_table(alice, bots, options={"single_hand": True})
        with Driver(transport=transport, notices=False) as driver:
            [outcome] = driver.play([game.pk])
    finally:
        strategy.thread.join()
        for again in restarted:
            again()
    assert outcome.finished and len(strategy.seats) > 8
    assert not BotCall.objects.filter(game_id=game.pk).exclude(error="").exists()


def test_the_call_log_and_the_events_carry_their_own_times(
    alice: Any, transport: BotTransport
) -> None:
    """Two answers are malformed (two strikes, their events among the moves): every row's
    time follows the game's versions."""
    strategy = Counted(10**9, lambda: None)

    def sometimes_malformed(view: dict[str, Any], rng: random.Random) -> Any:
        move = strategy(view, rng)
        return {"type": "play", "card": "ZZ"} if len(strategy.seats) in (3, 9) else move

    bots, _, stop = two_bots(alice, sometimes_malformed)
    try:
        game = bot_table(alice, bots, options={"single_hand": True})
        with Driver(transport=transport, notices=True) as driver:
            driver.play([game.pk])
    finally:
        stop()
    times = list(BotCall.objects.filter(game_id=game.pk).order_by("id")
                 .values_list("created_at", flat=True))
    assert len(set(times)) > len(times) // 2  # not one batch's time for all
    assert times == sorted(times)
    rows = [*GameEvent.objects.filter(game_id=game.pk).values_list("version", "created_at"),
            *MoveRecord.objects.filter(game_id=game.pk).values_list("version", "created_at")]
    assert GameEvent.objects.filter(game_id=game.pk, kind="strike").count() == 2
    by_version = [at for _, at in sorted(rows, key=lambda row: row[0])]
    assert by_version == sorted(by_version)


def test_a_failed_read_of_the_bots_leaves_the_games_playing_as_they_were(
    alice: Any, transport: BotTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    def down(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("the database is restarting")

    strategy = Counted(10**9, lambda: None)
    bots, _, stop = two_bots(alice, strategy)
    try:
        game = bot_table(alice, bots, options={"single_hand": True})
        monkeypatch.setattr(Bot.objects, "in_bulk", down)
        with Driver(transport=transport, notices=False) as driver:
            [outcome] = driver.play([game.pk])
    finally:
        stop()
    assert outcome.finished and outcome.error is None
