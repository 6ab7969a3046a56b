"""Process-wide counters of degraded operation, shown by ``/healthz/``.

Each web or worker process counts for itself (a load balancer's health check sees the process
that answered it). They count what was survived, not what failed a request: a throttle that
let a request through because its cache was unreachable, a turn clock left to the sweep
because the broker was. A monitor alerts on a counter that grows.
"""

from __future__ import annotations

import threading
from collections import Counter

THROTTLE_CACHE_ERRORS = "throttle_cache_errors"
TURN_CLOCK_SCHEDULE_ERRORS = "turn_clock_schedule_errors"
# A bot's decision the broker could not take: played by this process's thread runner instead.
BOT_TURN_PUBLISH_ERRORS = "bot_turn_publish_errors"
# A tournament's match the broker could not take: left to the tournament sweep.
MATCH_PUBLISH_ERRORS = "match_publish_errors"
REPLAY_CACHE_ERRORS = "replay_cache_errors"
LONG_POLLS_REFUSED = "long_polls_refused"
LONG_POLLS_OPEN = "long_polls_open"  # a gauge: waits held right now

_lock = threading.Lock()
_counts: Counter[str] = Counter()


def incr(name: str, amount: int = 1) -> None:
    with _lock:
        _counts[name] += amount


def gauge(name: str, value: int) -> None:
    """Set a value that goes up and down (reported with the counters)."""
    with _lock:
        _counts[name] = value


def snapshot() -> dict[str, int]:
    """Every counter, zeros included, so a monitor sees each name from the start."""
    with _lock:
        counts = dict(_counts)
    names = (THROTTLE_CACHE_ERRORS, TURN_CLOCK_SCHEDULE_ERRORS, BOT_TURN_PUBLISH_ERRORS,
             MATCH_PUBLISH_ERRORS, REPLAY_CACHE_ERRORS, LONG_POLLS_REFUSED, LONG_POLLS_OPEN)
    return {name: counts.get(name, 0) for name in names} | counts
