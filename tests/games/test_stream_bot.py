"""docs/api.md's stream bot, run as written: two copies of it (alice's and bob's) play two
games at once against each other, each on its one stream, until both games are over."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.accounts.services import token_create
from games.models import Game, GameStatus
from tests.games.stream_helpers import asgi_server
from tests.live_server import ROOT, start_a_game

pytestmark = pytest.mark.django_db(transaction=True)

HEADING = "## One stream for all your games"


def the_bot() -> str:
    doc = (ROOT / "docs" / "api.md").read_text()
    start = doc.index(HEADING)
    section = doc[start:doc.index("\n## ", start + len(HEADING))]
    return section.split("```python", 1)[1].split("```", 1)[0]


def test_the_documented_stream_bot_plays_two_games_at_once(alice, bob, tmp_path: Path):
    bot = tmp_path / "stream_bot.py"
    bot.write_text(the_bot())
    keys = [token_create(user=user)[1] for user in (alice, bob)]
    with asgi_server() as port:
        games = [start_a_game(port, keys[0], keys[1]) for _ in range(2)]
        bots = [
            subprocess.Popen(
                [sys.executable, str(bot)], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                env={"ARENA_PORT": str(port), "ARENA_TOKEN": key, "STOP_AFTER": "2",
                     "PATH": "/usr/bin:/bin"},
            )
            for key in keys
        ]
        try:
            outputs = [process.communicate(timeout=300)[0] for process in bots]
        finally:
            for process in bots:
                if process.poll() is None:
                    process.kill()
                    process.wait()
    assert [process.returncode for process in bots] == [0, 0], outputs
    for game in games:
        assert Game.objects.get(pk=game["id"]).status == GameStatus.FINISHED
    for output in outputs:
        assert sorted(line.split()[1] for line in output.splitlines()) == sorted(
            str(game["id"]) for game in games)
