"""Queues of their own for matches and bot-seat turns (TOURNAMENT_QUEUE, CELERY_TURN_QUEUE),
read in a fresh process since settings are read once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, django
django.setup()
from arena.celery import app
route = lambda name: app.amqp.router.route({}, name)["queue"]
print(json.dumps({
    "queues": [[q.name, q.exchange.name, q.routing_key] for q in app.amqp.queues.values()],
    "routes": {name: route(name).name for name in (
        "arena.tasks.match_play", "bots.tasks.bot_turn", "games.tasks.turn_clock_sweep")},
}))
"""


def routing(**variables: str) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "arena.settings", "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", **variables}
    for name in ("CELERY_QUEUE", "TOURNAMENT_QUEUE", "CELERY_TURN_QUEUE"):
        env.setdefault(name, "")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_without_queue_settings_every_task_goes_to_the_default_queue() -> None:
    found = routing(CELERY_QUEUE="site-a")
    assert set(found["routes"].values()) == {"site-a"}
    assert found["queues"] == [["site-a", "site-a", "site-a"]]


def test_matches_and_bot_turns_are_routed_to_their_own_queues_each_with_its_own_key() -> None:
    found = routing(TOURNAMENT_QUEUE="site-a.matches", CELERY_TURN_QUEUE="site-a.turns")
    assert found["routes"] == {
        "arena.tasks.match_play": "site-a.matches",
        "bots.tasks.bot_turn": "site-a.turns",
        "games.tasks.turn_clock_sweep": "celery",
    }
    # A worker without -Q reads all three; distinct keys, so no task is copied into two queues.
    assert found["queues"] == [[name, name, name] for name in
                               ("celery", "site-a.matches", "site-a.turns")]
