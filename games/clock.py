"""Time, behind one indirection so tests can drive the turn clock without sleeping.

Services call ``clock.now()`` (never ``timezone.now()`` directly); tests monkeypatch it.
``sleep``/``monotonic`` drive the long poll and can be replaced the same way.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING

from django.utils import timezone

if TYPE_CHECKING:
    from games.listen import Subscription
    from games.notify import Change


def now() -> datetime:
    return timezone.now()


def monotonic() -> float:
    return time.monotonic()


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def wait(event: threading.Event, seconds: float) -> bool:
    """Block until ``event`` is set or ``seconds`` pass; True if it was set."""
    return event.wait(seconds)


async def next_change(changes: Subscription, seconds: float) -> tuple[int, Change] | None:
    """The asynchronous waiters' ``wait``: the subscription's next change, or None after
    ``seconds``."""
    return await changes.next(seconds)
