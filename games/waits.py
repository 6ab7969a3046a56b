"""Caps on open long polls (``view?wait=``, ``events?wait=``, ``moves?wait=``).

Each long poll holds one of the web process's threads while it waits. Without a cap a single
user holding a few of them starved everyone's moves and the health check (the process queues
new requests behind its busy threads). So a process holds at most
``LONG_POLL_MAX_PER_PROCESS`` waits at once, well below its threads, and a user at most
``LONG_POLL_MAX_PER_USER`` of them (counted in each process). A wait over a cap is not held:
``view`` and ``events`` answer 429 with ``Retry-After``, a move is played and answered at once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from rest_framework.exceptions import Throttled

from core import metrics

# What a refused wait is told to wait before asking again.
RETRY_AFTER_SECONDS = 2

_lock = threading.Lock()
_open = 0
_by_user: Counter[object] = Counter()


class TooManyWaits(Throttled):
    default_code = "too_many_waits"
    default_detail = (
        "Too many requests are waiting at once (yours, or this server's); ask again after "
        "Retry-After seconds."
    )

    def __init__(self) -> None:
        super().__init__(wait=RETRY_AFTER_SECONDS, detail=self.default_detail)


@contextmanager
def slot(user_id: object, wait: float) -> Iterator[bool]:
    """Hold a wait slot for the block: True if the request may wait (always, when it asks
    for no wait), False if a cap is reached (the refusal is counted)."""
    if wait <= 0:
        yield True
        return
    taken = _take(user_id)
    if not taken:
        metrics.incr(metrics.LONG_POLLS_REFUSED)
    try:
        yield taken
    finally:
        if taken:
            _release(user_id)


@contextmanager
def slot_or_429(user_id: object, wait: float) -> Iterator[None]:
    """``slot`` for a read: over a cap it is refused (429 ``too_many_waits``)."""
    with slot(user_id, wait) as allowed:
        if not allowed:
            raise TooManyWaits()
        yield


def open_waits() -> int:
    with _lock:
        return _open


def _take(user_id: object) -> bool:
    global _open
    with _lock:
        if _open >= settings.LONG_POLL_MAX_PER_PROCESS:
            return False
        if _by_user[user_id] >= settings.LONG_POLL_MAX_PER_USER:
            return False
        _open += 1
        _by_user[user_id] += 1
        metrics.gauge(metrics.LONG_POLLS_OPEN, _open)
        return True


def _release(user_id: object) -> None:
    global _open
    with _lock:
        _open -= 1
        _by_user[user_id] -= 1
        if _by_user[user_id] <= 0:
            del _by_user[user_id]
        metrics.gauge(metrics.LONG_POLLS_OPEN, _open)
