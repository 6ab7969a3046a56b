"""Call logs flushed at once by matches that share bots never deadlock. Needs PostgreSQL (real
row locks, concurrent connections); skipped on the embedded SQLite."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from bots import services
from bots.models import BotCall, BotCounter, CallKind
from tests.bots.helpers import register

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def call(bot_id: int) -> dict[str, Any]:
    return {"bot_id": bot_id, "kind": CallKind.TURN, "latency_ms": 1.0, "status": 200,
            "created_at": timezone.now()}


def test_two_flushes_naming_the_same_bots_in_opposite_orders_both_commit(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: each bumped its counters in the order its calls came, and PostgreSQL killed
    one with 'deadlock detected' (a match task failed, its tournament stalled until the
    sweep). Each flush now pauses after its first counter: in any order but one they would
    hold one lock each and want the other's."""
    one, _ = register(alice, "one", "http://127.0.0.1:9/")
    two, _ = register(alice, "two", "http://127.0.0.1:9/")
    services.calls_record([call(one.pk), call(two.pk)])  # the counters exist from here on
    both_hold_one = threading.Barrier(2)
    bump = services._bump

    def bump_then_pause(bot_id: int, names: list[str], *, by: int = 1) -> None:
        bump(bot_id, names, by=by)
        # Ordered locks: the other flush waits on this first one, and the barrier breaks.
        with contextlib.suppress(threading.BrokenBarrierError):
            both_hold_one.wait(timeout=1)

    monkeypatch.setattr(services, "_bump", bump_then_pause)
    errors: list[BaseException] = []

    def flush(order: list[int]) -> None:
        try:
            services.calls_record([call(bot_id) for bot_id in order])
        except BaseException as exc:  # the test reports it
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=flush, args=(order,))
               for order in ([one.pk, two.pk], [two.pk, one.pk])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert BotCall.objects.count() == 6
    assert dict(BotCounter.objects.filter(name="calls").values_list("bot_id", "count")) == {
        one.pk: 3, two.pk: 3}
