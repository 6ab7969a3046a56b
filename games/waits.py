"""Caps on open long polls (``view?wait=``, ``events?wait=``, ``moves?wait=``).

Two kinds of wait, counted apart in each process:

* served by a WSGI server (runserver, gunicorn's gthread workers), a long poll holds one of
  the process's threads while it waits. Without a cap a single user holding a few of them
  starved everyone's moves and the health check. So such a process holds at most
  ``LONG_POLL_MAX_PER_PROCESS`` of them, well below its threads, and a user at most half
  of that;
* served by the ASGI application (``arena.serving``: compose, the image), a wait costs a
  socket and a little memory on the event loop, no thread: a process holds up to
  ``WAIT_MAX_PER_PROCESS`` (thousands).

A user holds at most ``LONG_POLL_MAX_PER_USER`` waits (of both kinds, counted in each
process). A wait over a cap is not held: ``view`` and ``events`` answer 429 with
``Retry-After``, a move is played and answered at once.
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
_open = 0  # thread-held waits
_open_async = 0  # waits on the event loop
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


def take_async(user_id: object, wait: float) -> bool:
    """Take a slot for a wait on the event loop (``release_async`` gives it back): True if
    taken, False (counted as refused) over a cap or without a wait."""
    global _open_async
    if wait <= 0:
        return False
    with _lock:
        taken = (
            _open_async < settings.WAIT_MAX_PER_PROCESS
            and _by_user[user_id] < settings.LONG_POLL_MAX_PER_USER
        )
        if taken:
            _open_async += 1
            _by_user[user_id] += 1
            metrics.gauge(metrics.LONG_POLLS_OPEN, _open + _open_async)
    if not taken:
        metrics.incr(metrics.LONG_POLLS_REFUSED)
    return taken


def release_async(user_id: object) -> None:
    global _open_async
    with _lock:
        _open_async -= 1
        _forget_one(user_id)
        metrics.gauge(metrics.LONG_POLLS_OPEN, _open + _open_async)


def open_waits() -> int:
    with _lock:
        return _open + _open_async


def _take(user_id: object) -> bool:
    global _open
    per_user = min(settings.LONG_POLL_MAX_PER_USER, max(1, settings.LONG_POLL_MAX_PER_PROCESS // 2))
    with _lock:
        if _open >= settings.LONG_POLL_MAX_PER_PROCESS:
            return False
        if _by_user[user_id] >= per_user:
            return False
        _open += 1
        _by_user[user_id] += 1
        metrics.gauge(metrics.LONG_POLLS_OPEN, _open + _open_async)
        return True


def _release(user_id: object) -> None:
    global _open
    with _lock:
        _open -= 1
        _forget_one(user_id)
        metrics.gauge(metrics.LONG_POLLS_OPEN, _open + _open_async)


def _forget_one(user_id: object) -> None:  # under _lock
    _by_user[user_id] -= 1
    if _by_user[user_id] <= 0:
        del _by_user[user_id]
