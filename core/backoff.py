"""A service left alone for a few seconds after it failed, so that the requests that follow do
not each wait for it in turn: a stalled Redis accepts connections and never answers, and each
request paid its client's socket timeout (about a second) until it came back."""

from __future__ import annotations

import time


class Backoff:
    """After ``failed()``, ``skipping()`` says True for ``seconds``: the caller answers as it
    does when the service fails, without asking it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._until = 0.0

    def skipping(self) -> bool:
        return time.monotonic() < self._until

    def failed(self) -> None:
        self._until = time.monotonic() + self.seconds

    def forget(self) -> None:
        """Ask the service at the next call (tests)."""
        self._until = 0.0
