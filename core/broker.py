"""Sending a task to the broker once a change has committed, without letting a broker outage
stop play.

What is sent after a commit (a turn clock's check, a bot's decision, a tournament's match)
always has a way on without the broker: the periodic sweeps, or the work done in this process.
So a failed send is not an error: ``send`` catches it, counts it (``core.metrics``, shown by
``/healthz/``), logs it, and answers False for the caller to take that way. A stalled broker
costs a send about a second (the transport's ``socket_timeout`` in arena/settings.py); after a
failure the broker is not tried again for ``BACKOFF_SECONDS``, so the requests that follow do
not each wait for it in turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core import metrics
from core.backoff import Backoff

log = logging.getLogger(__name__)

# After a failed send, sends are not tried for this long (answered False at once).
BACKOFF_SECONDS = 5.0
_backoff = Backoff(BACKOFF_SECONDS)


def send(publish: Callable[[], object], *, counter: str, what: str, instead: str) -> bool:
    """Call ``publish`` (an ``apply_async``). False, counted under ``counter``, if it failed
    now or the broker failed a moment ago; ``what`` and ``instead`` name, for the log, what was
    sent and what happens to it now."""
    if _backoff.skipping():
        metrics.incr(counter)
        return False
    try:
        publish()
    except Exception as exc:
        # Any exception: the change is committed, and kombu raises library errors, redis-py's
        # and socket errors alike; none of them may reach the request as a 500.
        _backoff.failed()
        metrics.incr(counter)
        log.warning("%s %s: could not send it to the broker (%s: %s); not trying the broker "
                    "again for %s s", what, instead, type(exc).__name__, exc, BACKOFF_SECONDS)
        return False
    return True


def forget() -> None:
    """Try the broker at the next send (tests)."""
    _backoff.forget()
