"""The seat hook: after every committed change of a game with bot seats, hand what the bots
need (a decision, a notice) to a worker, so the request that made the change never waits for
a bot.

* Production (a broker): a Celery task, ``bots.tasks.bot_turn(game_id, version)``.
* The embedded default (no broker, Celery eager): a small thread pool in the server process.
  Eager Celery would run the bot call inside the request; the pool does not.
* A broker that cannot take the task (down, stalled): the same thread pool, for that decision.

``BOTS_RUNNER`` = "celery" | "thread" | "off" overrides the choice ("off": nothing is
dispatched; a caller drives games itself with ``runner.play_game``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connections

from bots import runner
from bots.advance import advance
from bots.advance import forget as forget_start_notices
from core import broker, metrics
from games.models import Game, GameStatus, Seat

log = logging.getLogger(__name__)

_CACHE_SIZE = 4096
_lock = threading.Lock()
# Per running game, its bot seats {index: bot id}: fixed once the game starts, so a process
# reads them once per game.
_bot_seats: OrderedDict[int, dict[int, int]] = OrderedDict()
# The last version dispatched per game (several announcements of one transaction share it).
_dispatched: OrderedDict[int, int] = OrderedDict()
_executor: ThreadPoolExecutor | None = None


def mode() -> str:
    configured = getattr(settings, "BOTS_RUNNER", "")
    if configured:
        return str(configured)
    return "thread" if settings.CELERY_TASK_ALWAYS_EAGER else "celery"


def _remember(cache: OrderedDict[int, object], key: int, value: object) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def bot_seats(game_id: int) -> dict[int, int]:
    with _lock:
        known = _bot_seats.get(game_id)
    if known is not None:
        return known
    found = dict(Seat.objects.filter(game_id=game_id, bot__isnull=False)
                 .values_list("index", "bot_id"))
    with _lock:
        _remember(_bot_seats, game_id, found)  # type: ignore[arg-type]
    return found


def on_change(game: Game) -> None:
    """``games.hooks`` listener (runs after the commit, in the committing process)."""
    if game.status == GameStatus.OPEN or runner.is_driven_here(game.pk):
        return
    if mode() == "off":
        return
    seats = bot_seats(game.pk)
    if not seats:
        return
    needed = game.is_over or game.move_count == 0 or game.awaiting in seats
    with _lock:
        if _dispatched.get(game.pk, -1) >= game.version:
            return
        _remember(_dispatched, game.pk, game.version)  # type: ignore[arg-type]
    if needed:
        submit(game.pk, game.version)


def submit(game_id: int, version: int) -> None:
    if mode() == "celery" and _publish(game_id, version):
        return
    _pool().submit(_in_thread, game_id, version)


def _publish(game_id: int, version: int) -> bool:
    """A worker's task for the decision; False if the broker cannot take it. The decision is
    then this process's thread runner's (as on the embedded default): left to nobody, the turn
    clock would strike the bot and forfeit it for an outage of ours. Should the task have
    reached the broker after all, its decision goes stale before the second is played
    (``bots.advance`` plays a version once), so it is still taken once."""
    from bots.tasks import bot_turn

    return broker.send(
        lambda: bot_turn.delay(game_id, version),
        counter=metrics.BOT_TURN_PUBLISH_ERRORS,
        what=f"bot decision of game {game_id} (version {version})",
        instead="played in this process",
    )


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=int(getattr(settings, "BOTS_THREADS", 4)),
                thread_name_prefix="bot-runner",
            )
        return _executor


def _in_thread(game_id: int, version: int) -> None:
    close_old_connections()
    try:
        advance(game_id, version)
    except Exception:
        # The turn clock still covers the seat; a lost decision costs latency, not the game.
        log.exception("bot decision failed (game %s version %s)", game_id, version)
    finally:
        if not connections["default"].in_atomic_block:
            connections.close_all()


def drain() -> None:
    """Wait for the thread pool's work so far (tests and shutdown)."""
    global _executor
    with _lock:
        pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=True)


def forget() -> None:
    """Drop the per-process caches (tests: a new database reuses ids)."""
    with _lock:
        _bot_seats.clear()
        _dispatched.clear()
    forget_start_notices()
