"""Wake long-polling requests the moment their game changes.

A long poll (``events?wait=``, ``view?wait=``, ``moves?wait=``) subscribes to its game and
sleeps on a ``threading.Event``. Every change to a game bumps its version:

* in this process, ``announce`` wakes the waiters when the transaction commits (``on_commit``);
* on PostgreSQL, a trigger on ``games_game.version`` NOTIFYs every process (migrations 0002
  and 0004); NOTIFY is transactional, so nobody wakes for a rolled-back move. Each process
  runs at most one listener thread, only while it has waiters.

A notification says what changed (a ``Change``: the new version, the awaited seat, the
status), so a waiter can ignore what it does not wait for (its own move, another seat's turn)
without reading the game.

Waiters still re-read the game's version every ``RECHECK_SECONDS``, so a lost notification
costs latency, never correctness. SQLite has no cross-process channel: the embedded default
(runserver, one process) relies on the in-process wake-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import connections, transaction

from games import hooks

if TYPE_CHECKING:
    from games.models import Game

log = logging.getLogger(__name__)

CHANNEL = "uno_arena_games"
IDLE_LISTENER_SECONDS = 0.5  # a listener with no waiters closes its connection this soon


@dataclass(frozen=True)
class Change:
    """What a notification says about a game. ``version`` None: it said nothing more (a
    waiter must read the game to know). ``row``: the game's new row as the NOTIFY carried it
    (JSON text, every column; migration 0008), when it fit."""

    version: int | None = None
    awaiting: int | None = None
    status: str = ""
    row: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_payload(cls, payload: str) -> tuple[int, Change] | None:
        """Parse ``"<game id> <version> <awaiting or -> <status>[ <row>]"`` (or a bare id)."""
        parts = payload.split(" ", 4)
        if not parts[0].isdigit():
            return None
        game_id = int(parts[0])
        if len(parts) < 4 or not parts[1].isdigit():
            return game_id, cls()
        awaiting = int(parts[2]) if parts[2].lstrip("-").isdigit() else None
        row = parts[4] if len(parts) == 5 else None
        return game_id, cls(version=int(parts[1]), awaiting=awaiting, status=parts[3], row=row)


class Subscription:
    """One waiter's view of its game's changes: ``event`` is set when one arrives, and
    ``take`` returns the newest since the last call. ``want`` lets the waiter say which
    changes it waits for, so the others (its own move, told back by the database; another
    seat's turn) do not wake its thread at all."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._latest: Change | None = None
        self._wanted: Callable[[Change], bool] | None = None

    def want(self, wanted: Callable[[Change], bool]) -> None:
        """From now on only changes ``wanted`` says yes to (and unknown ones) are collected."""
        with _lock:
            self._wanted = wanted

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, seconds: float) -> bool:
        return self.event.wait(seconds)

    def take(self) -> Change | None:
        """The newest change since the last ``take`` (an unknown one wins: the waiter must
        read); None if there was none."""
        with _lock:
            self.event.clear()
            latest, self._latest = self._latest, None
        return latest

    def _push(self, change: Change) -> None:  # under _lock
        if change.version is not None and self._wanted is not None and not self._wanted(change):
            return
        if self._supersedes(change):
            self._latest = change
        self.event.set()

    def _supersedes(self, change: Change) -> bool:
        latest = self._latest
        if latest is None or change.version is None:
            return True
        return latest.version is not None and change.version >= latest.version


_lock = threading.Lock()
_waiters: dict[int, set[Subscription]] = {}
_listener: _Listener | None = None
_bridges: list[Callable[[int, Change], None]] = []


def announce(game: Game) -> None:
    """Wake this process's waiters of ``game`` once the current transaction commits (other
    processes hear of it from the database trigger) and tell ``games.hooks``' listeners. The
    change is read off ``game`` at the commit, so several announcements in one transaction
    all tell its final state."""
    transaction.on_commit(lambda: _announced(game))


def add_bridge(bridge: Callable[[int, Change], None]) -> None:
    """Also tell ``bridge`` (from the committing thread) of every in-process announcement:
    ``games.listen`` carries them into the event loops of asynchronous waiters."""
    _bridges.append(bridge)


def _announced(game: Game) -> None:
    change = Change(game.version, game.awaiting, str(game.status))
    _wake(game.pk, change)
    for bridge in _bridges:
        bridge(game.pk, change)
    hooks.changed(game)  # seats driven by the server (bots) hear of it here


@contextmanager
def subscription(game_id: int) -> Iterator[Subscription]:
    """Collect ``game_id``'s changes while the block runs.

    Subscribe *before* reading the game's version: a change between the read and the wait
    then leaves the event set, so the wait returns at once instead of missing it.
    """
    subscriber = Subscription()
    with _lock:
        _waiters.setdefault(game_id, set()).add(subscriber)
    if connections["default"].vendor == "postgresql":
        _ensure_listener()
    try:
        yield subscriber
    finally:
        with _lock:
            subscribers = _waiters.get(game_id)
            if subscribers is not None:
                subscribers.discard(subscriber)
                if not subscribers:
                    del _waiters[game_id]


def _wake(game_id: int, change: Change | None = None) -> None:
    with _lock:
        for subscriber in _waiters.get(game_id, ()):
            subscriber._push(change or Change())


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
                parsed = Change.from_payload(note.payload)
                if parsed is not None:
                    _wake(*parsed)
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
