"""What a game played in memory risks. A driver process killed with SIGKILL mid-game loses
only that game's unrecorded moves: the stored game still stands at the version it started
from, its turn clock running, and another driver plays it on from there. A game played longer
than its turn clock is checkpointed before the clock runs out. A real process, PostgreSQL,
bots on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bots import runner
from bots import services as bot_services
from bots.models import BotCall
from bots.transport import BotTransport
from games.models import Game, GameStatus, MoveRecord
from tests.bots.fault_server import FaultServer
from tests.bots.helpers import bot_table, register
from tests.live_server import database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

_DRIVE = (
    "import sys, django; django.setup(); from bots.driver import Driver; "
    "Driver(notices=False).play([int(sys.argv[1])])"
)


def _wait(check: Any, seconds: float = 60) -> bool:
    """Poll ``check`` until it holds or ``seconds`` pass (a bound, not a timing claim)."""
    for _ in range(int(seconds * 20)):
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def test_a_driver_killed_mid_game_leaves_the_game_at_its_start_version(
    settings: Any, alice: Any
) -> None:
    settings.BOTS_RUNNER = "off"
    with FaultServer(mode="ok") as bot_server:
        bots = [register(alice, f"k{i}", bot_server.url_for("slow/0.05"))[0] for i in range(2)]
        game = bot_table(alice, bots, options={"target_score": 500})
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings",
               "DATABASE_URL": database_url(), "BOTS_ALLOW_PRIVATE": "true",
               "BOTS_RUNNER": "off", "DEBUG": "false", "LOG_LEVEL": "WARNING"}
        process = subprocess.Popen([sys.executable, "-c", _DRIVE, str(game.pk)], cwd=ROOT,
                                   env=env)
        try:
            # Mid-game: the driver has had several answers applied in its memory.
            assert _wait(lambda: len(bot_server.requests) >= 10)
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        finally:
            if process.poll() is None:
                process.kill()
        stored = Game.objects.get(pk=game.pk)
        assert (stored.status, stored.version, stored.move_count) == (
            GameStatus.RUNNING, game.version, 0)
        assert stored.turn_deadline == game.turn_deadline  # its clock runs as it did
        assert not MoveRecord.objects.filter(game=stored).exists()
        assert not BotCall.objects.filter(game=stored).exists()
        # Another driver plays it on from the stored version.
        for bot in bots:
            bot_services.bot_update(bot=bot, data={"url": bot_server.url_for("ok")})
        transport = BotTransport(allow_private=True)
        try:
            final = runner.play_game(game.pk, transport=transport, notices=False)
        finally:
            transport.close()
    assert final.status == GameStatus.FINISHED
    numbers = list(MoveRecord.objects.filter(game=final).order_by("number")
                   .values_list("number", "version"))
    assert numbers[0] == (1, game.version + 1)
    assert [n for n, _ in numbers] == list(range(1, final.move_count + 1))


def test_a_game_played_longer_than_its_turn_clock_is_checkpointed_before_the_clock_runs_out(
    settings: Any, alice: Any
) -> None:
    """The stored game's clock keeps running while the driver plays in memory: the driver
    records a checkpoint halfway to each deadline, so the clock's sweep (run here all along)
    never finds the game overdue."""
    from bots.driver import Driver
    from games import services as game_services
    from games.models import MoveSource

    settings.BOTS_RUNNER = "off"
    stop = threading.Event()

    def sweep() -> None:
        from django.db import connection

        try:
            while not stop.wait(0.05):
                game_services.turn_clock_sweep()
        finally:
            connection.close()

    with FaultServer(mode="ok") as bot_server:
        bots = [register(alice, f"c{i}", bot_server.url_for("slow/0.03"))[0] for i in range(2)]
        game = bot_table(alice, bots, options={"target_score": 500}, turn_seconds=1)
        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        transport = BotTransport(allow_private=True)
        try:
            with Driver(transport=transport, notices=False, max_turns=100) as driver:
                [outcome] = driver.play([game.pk])
        finally:
            stop.set()
            sweeper.join()
            transport.close()
    assert outcome.recorded and outcome.error is None and outcome.turns == 100
    stored = Game.objects.get(pk=game.pk)
    assert stored.status == GameStatus.RUNNING  # a long game, left where the driver stopped
    # Every move is a bot's: the clock never played for a seat.
    assert not MoveRecord.objects.filter(game=stored, source=MoveSource.CLOCK).exists()
    assert MoveRecord.objects.filter(game=stored).count() == stored.move_count == 100
