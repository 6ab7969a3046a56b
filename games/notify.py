"""Wake long-polling requests the moment their game changes.

A long poll (``events?wait=``, ``view?wait=``, ``moves?wait=``) subscribes to its game and
sleeps on a ``threading.Event``. Every change to a game bumps its version:

* in this process, ``announce`` wakes the waiters when the transaction commits (``on_commit``);
* on PostgreSQL, a trigger on ``games_game.version`` NOTIFYs every process (migration 0002);
  NOTIFY is transactional, so nobody wakes for a rolled-back move. Each process runs at most
  one listener thread, only while it has waiters.

Waiters still re-read the game's version every ``RECHECK_SECONDS``, so a lost notification
costs latency, never correctness. SQLite has no cross-process channel: the embedded default
(runserver, one process) relies on the in-process wake-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections, transaction

log = logging.getLogger(__name__)

CHANNEL = "uno_arena_games"
IDLE_LISTENER_SECONDS = 0.5  # a listener with no waiters closes its connection this soon

_lock = threading.Lock()
_waiters: dict[int, set[threading.Event]] = {}
_listener: _Listener | None = None


def announce(game_id: int) -> None:
    """Wake this process's waiters of ``game_id`` once the current transaction commits (other
    processes hear of it from the database trigger)."""
    transaction.on_commit(lambda: _wake(game_id))


@contextmanager
def subscription(game_id: int) -> Iterator[threading.Event]:
    """An event that is set whenever ``game_id`` changes while the block runs.

    Subscribe *before* reading the game's version: a change between the read and the wait
    then leaves the event set, so the wait returns at once instead of missing it.
    """
    event = threading.Event()
    with _lock:
        _waiters.setdefault(game_id, set()).add(event)
    if connections["default"].vendor == "postgresql":
        _ensure_listener()
    try:
        yield event
    finally:
        with _lock:
            events = _waiters.get(game_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del _waiters[game_id]


def _wake(game_id: int) -> None:
    with _lock:
        events = list(_waiters.get(game_id, ()))
    for event in events:
        event.set()


def _has_waiters() -> bool:
    with _lock:
        return bool(_waiters)


def _ensure_listener() -> None:
    global _listener
    with _lock:
        if _listener is None or not _listener.is_alive():
            _listener = _Listener(connections["default"].get_connection_params())
            _listener.start()


def stop_listener() -> None:
    """Stop this process's listener now (tests call it before the test database goes)."""
    global _listener
    with _lock:
        listener, _listener = _listener, None
    if listener is not None:
        listener.stopping.set()
        listener.join(timeout=5)


class _Listener(threading.Thread):
    """LISTENs on its own connection while this process has waiters, then closes it."""

    def __init__(self, params: dict[str, object]) -> None:
        super().__init__(name="uno-arena-notify", daemon=True)
        self.params = params
        self.stopping = threading.Event()

    def run(self) -> None:
        import psycopg

        try:
            with psycopg.connect(**self.params, autocommit=True) as conn:  # type: ignore[arg-type]
                conn.execute(f"LISTEN {CHANNEL}")
                self._serve(conn)
        except Exception:  # the waiters' periodic re-check keeps long polls correct
            log.exception("game notification listener stopped")

    def _serve(self, conn: object) -> None:
        idle = 0.0
        while not self.stopping.is_set():
            for note in conn.notifies(timeout=0.25):  # type: ignore[attr-defined]
                if note.payload.isdigit():
                    _wake(int(note.payload))
            idle = 0.0 if _has_waiters() else idle + 0.25
            if idle >= IDLE_LISTENER_SECONDS and self._retire():
                return

    def _retire(self) -> bool:
        """Leave if still idle; decided under the lock so a new waiter starts a new listener."""
        global _listener
        with _lock:
            if _waiters:
                return False
            if _listener is self:
                _listener = None
            return True
