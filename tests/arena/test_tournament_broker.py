"""A tournament's start when the broker cannot take its matches (Redis stopped, or stalled with
SIGSTOP): the start is committed, so it is answered as started; its matches stay pending, and
the tournament sweep sends them once the broker is back. A real gunicorn with a broken broker,
real bots on 127.0.0.1."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings

from arena import services
from arena.accounts.services import token_create
from arena.models import Match, MatchStatus, Tournament, TournamentStatus
from core import broker
from tests.arena.tournament_helpers import http_bots, tournament_of
from tests.live_server import broken_broker, call, live_server

pytestmark = pytest.mark.django_db(transaction=True)


def _start_with_a_broken_broker(
    owner: Any, kind: str
) -> tuple[Tournament, int, Any, dict[str, int]]:
    """Three bots' tournament (three matches) started over the API while the broker is
    ``kind``: (the tournament, the answer's status and body, the server's counters)."""
    key = token_create(user=owner)[1]
    with http_bots(owner, ["greedy", "random", "heuristic"]) as bots:
        tournament = tournament_of(owner, bots)
        with broken_broker(kind) as url, live_server({"CELERY_BROKER_URL": url}) as port:
            status, body, _ = call(port, "POST", f"/api/tournaments/{tournament.pk}/start/",
                                   key=key, timeout=15)
            counters = call(port, "GET", "/healthz/")[1]["counters"]
    return tournament, status, body, counters


@pytest.mark.parametrize("kind", ["dead", "stalled"])
def test_a_start_is_answered_as_started_when_the_broker_cannot_take_its_matches(
    alice: Any, kind: str
) -> None:
    tournament, status, body, counters = _start_with_a_broken_broker(alice, kind)
    assert status == 200, body
    assert body["status"] == "running"
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.RUNNING
    matches = Match.objects.filter(tournament=tournament)
    assert matches.count() == 3
    assert set(matches.values_list("status", flat=True)) == {MatchStatus.PENDING}
    assert counters.get("match_publish_errors") == 3  # each match left to the sweep


@pytest.mark.redis
def test_the_sweep_sends_the_matches_a_start_could_not_once_the_broker_is_back(
    alice: Any, settings: Any
) -> None:
    tournament, status, body, _ = _start_with_a_broken_broker(alice, "dead")
    assert status == 200, body
    queue = f"sweep-test-{uuid.uuid4().hex}"
    settings.TOURNAMENT_QUEUE = queue
    broker.forget()
    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    try:
        # This process's broker (the test's Redis) is up: beat's sweep, run here.
        assert services.tournament_sweep() == {"sent": 3, "finalized": 0}
        sent = [json.loads(raw)["headers"]["argsrepr"] for raw in client.lrange(queue, 0, -1)]
    finally:
        client.delete(queue)
    matches = Match.objects.filter(tournament=tournament).values_list("pk", flat=True)
    assert sorted(sent) == sorted(f"({pk},)" for pk in matches)
