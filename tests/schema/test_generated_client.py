"""A bot writer's generated client: openapi-python-client generates a client from the schema a
live server serves, without warnings; ``mypy --strict`` passes over it and a small typed
driver (``client_driver.py``); and the driver signs two players up, gets their tokens and
plays them through a whole one-hand game on that server with only the generated client and
its typed models (views, legal moves, events and the replay parsed into them)."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from games.models import Game
from tests.schema.gunicorn import gunicorn

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

HERE = Path(__file__).resolve().parent
PACKAGE = "uno_arena_client"
CONFIG = f"post_hooks: []\nproject_name_override: {PACKAGE}\npackage_name_override: {PACKAGE}\n"


def _run(*command: str, cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    return output


def test_a_generated_client_type_checks_and_plays_a_whole_game(tmp_path: Path) -> None:
    db = connection.settings_dict
    url = f"postgresql://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    # Its own in-process cache: the sign-up and token rate limits count from zero.
    with gunicorn(workers=1, threads=4, env={"DATABASE_URL": url, "CACHE_URL": None}) as port:
        served = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        served.request("GET", "/api/schema/?format=json")
        (tmp_path / "schema.json").write_bytes(served.getresponse().read())
        (tmp_path / "config.yaml").write_text(CONFIG)

        generated = _run(
            sys.executable, "-m", "openapi_python_client", "generate", "--path", "schema.json",
            "--output-path", PACKAGE, "--meta", "none", "--config", "config.yaml", cwd=tmp_path,
        )
        assert "warning" not in generated.lower(), generated

        shutil.copy(HERE / "client_driver.py", tmp_path / "client_driver.py")
        checked = _run(
            sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / ".mypy"),
            PACKAGE, "client_driver.py", cwd=tmp_path,
        )
        assert "Success: no issues found" in checked, checked

        played = _run(
            sys.executable, "client_driver.py", f"http://127.0.0.1:{port}",
            "alice:alice's long passphrase 1", "bob:bob's long passphrase 1", cwd=tmp_path,
        )
    summary = json.loads(played.strip().splitlines()[-1])
    print(summary)  # shown with -s
    game = Game.objects.get(pk=summary["game"])
    assert summary["status"] == game.status == "finished"
    assert summary["winner"] == game.winner is not None
    assert summary["moves"] == game.move_count > 0
    assert {"JoinedEvent", "StartedEvent", "MoveEvent", "FinishedEvent"} <= set(summary["events"])
