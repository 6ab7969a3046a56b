"""Rate limits that fail open: when the cache holding their counters (Redis) is unreachable,
a request goes through with a logged warning and a counter (``core.metrics``) instead of a
500. A few minutes without rate limits are better than no play at all for the whole outage.

Every use of the cache goes through ``with_cache``: after a failure the cache is not asked
again for ``CACHE_BACKOFF_SECONDS``. A stalled Redis (SIGSTOP, a half-open connection) cost
each request the client's socket timeout (1 s, arena/settings.py) in turn: in an outage review
moves fell from about 85 a second to 4 for a 15-second stall."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from core import metrics
from core.backoff import Backoff

log = logging.getLogger(__name__)

# What an unreachable or failing cache raises: Django's Redis cache passes redis-py's errors
# through; a socket error can come from any other backend.
CACHE_ERRORS: tuple[type[Exception], ...] = (RedisError, OSError)
CACHE_BACKOFF_SECONDS = 5.0
cache_backoff = Backoff(CACHE_BACKOFF_SECONDS)

T = TypeVar("T")


def with_cache(operation: Callable[[], T], *, failed: T, counter: str | None, what: str) -> T:
    """``operation()`` (a use of the cache), or ``failed`` when the cache fails now or failed
    less than ``CACHE_BACKOFF_SECONDS`` ago (counted under ``counter``; ``what`` names the use
    for the log)."""
    if cache_backoff.skipping():
        if counter:
            metrics.incr(counter)
        return failed
    try:
        return operation()
    except CACHE_ERRORS as exc:
        cache_backoff.failed()
        if counter:
            metrics.incr(counter)
        log.warning("%s: the cache is unreachable (%s: %s); not asking it again for %s s",
                    what, type(exc).__name__, exc, CACHE_BACKOFF_SECONDS)
        return failed


class FailOpenScopedRateThrottle(ScopedRateThrottle):
    """DRF's ``ScopedRateThrottle`` (``throttle_scope`` on the view), open when its cache is
    down."""

    def allow_request(self, request: Request, view: Any) -> bool:
        allow = super().allow_request
        return with_cache(lambda: allow(request, view), failed=True,
                          counter=metrics.THROTTLE_CACHE_ERRORS,
                          what=f"rate limit {getattr(self, 'scope', None)!r} not applied")
