"""Rate limits that fail open: when the cache holding their counters (Redis) is unreachable,
a request goes through with a logged warning and a counter (``core.metrics``) instead of a
500. A few minutes without rate limits are better than no play at all for the whole outage."""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from core import metrics

log = logging.getLogger(__name__)

# What an unreachable or failing cache raises: Django's Redis cache passes redis-py's errors
# through; a socket error can come from any other backend.
CACHE_ERRORS: tuple[type[Exception], ...] = (RedisError, OSError)


class FailOpenScopedRateThrottle(ScopedRateThrottle):
    """DRF's ``ScopedRateThrottle`` (``throttle_scope`` on the view), open when its cache is
    down."""

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except CACHE_ERRORS as exc:
            metrics.incr(metrics.THROTTLE_CACHE_ERRORS)
            log.warning(
                "rate limit %r not applied: its cache is unreachable (%s: %s)",
                getattr(self, "scope", None), type(exc).__name__, exc,
            )
            return True
