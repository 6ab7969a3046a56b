"""What the bots seated at a live table need at a version of its game (the dispatcher's thread
and the ``bot_turn`` task both call ``advance``): the start notices, once, before any bot's
first decision; the end notices; or the awaited bot's decision.

The start notices are claimed in the cache (Redis, shared by every worker; the embedded
default's own memory, where one process runs every decision). They were sent only by the job
for the start's own version, and only if the game had not moved on when it ran: a person who
moved first, before a worker reached that job, left the bots without a start notice, and a
bot's first turn could be sent while another thread still sent its start (a bot writer's
review). Now every job of a running game sees to them first: the job that claims them sends
them; another waits until they are sent (at most as long as that may take) before it calls a
bot. Only in a game's first moves (``NOTICE_WITHIN_MOVES``).
With the cache down every job sends its own: a bot may then get the notice twice, never none.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from django.core.cache import cache

from bots import runner
from bots import transport as bot_transport
from bots.models import CallKind
from core.throttling import with_cache
from games import hooks
from games.models import Game, GameStatus, Seat

SENDING, SENT = "sending", "sent"
# A game this far in had its start long ago: its notices are not sent again, even with no
# claim in the cache (flushed, evicted, or the claim older than this code). A bot's first turn
# comes within its table's first round, well under this many moves.
NOTICE_WITHIN_MOVES = 40
# Long enough for any game: a key gone while its game runs would mean a second notice.
CLAIM_SECONDS = 14 * 24 * 3600
_KNOWN = 4096  # games this process knows to have had their start notices
_noticed: OrderedDict[int, None] = OrderedDict()
_lock = threading.Lock()


def advance(game_id: int, version: int, *,
            transport: bot_transport.BotTransport | None = None) -> str:
    """Whatever the bots need at (game, version); ``runner.SKIPPED`` when nothing (a stale
    version: late or duplicate deliveries are harmless)."""
    game = Game.objects.filter(pk=game_id).only(
        "status", "version", "move_count", "turn_seconds", "seed").first()
    if game is None:
        return runner.SKIPPED
    if game.is_over:
        if game.version == version:
            runner.send_notices(game_id, CallKind.END, transport=transport)
        return runner.SKIPPED
    if hooks.is_driven_anywhere(game_id):
        # A driver plays it (a tournament's game, maybe in a worker that stopped): a move
        # here would race it, and a dead driver's game is the match's next worker's to settle.
        return runner.SKIPPED
    if game.status == GameStatus.RUNNING and game.move_count < NOTICE_WITHIN_MOVES:
        start_noticed(game, transport=transport)
    if game.version != version:
        return runner.SKIPPED
    return runner.play_turn(game_id, version, transport=transport)


def start_noticed(game: Game, *, transport: bot_transport.BotTransport | None = None) -> None:
    """Return once the game's start notices are sent: by this call if it claims them first,
    else by whoever did (waited for, at most as long as sending them may take)."""
    game_id = game.pk
    with _lock:
        if game_id in _noticed:
            return
    # The seed too: ids start again in a new database that may share the cache (tests, a
    # reset), and a key left by another game of the same id would skip this one's notices.
    key = f"bots:start-notices:{game_id}:{game.seed}"
    if with_cache(lambda: cache.add(key, SENDING, CLAIM_SECONDS), failed=True, counter=None,
                  what="start notices claimed"):
        runner.send_notices(game_id, CallKind.START, transport=transport)
        with_cache(lambda: cache.set(key, SENT, CLAIM_SECONDS), failed=None, counter=None,
                   what="start notices sent")
    else:  # as long as the sender may take: one notice after another, each bot its timeout
        bots = Seat.objects.filter(game_id=game_id, bot__isnull=False).count()
        deadline = time.monotonic() + bots * runner.NOTICE_TIMEOUT_SECONDS + 1
        while time.monotonic() < deadline and with_cache(
                lambda: cache.get(key), failed=SENT, counter=None,
                what="start notices awaited") == SENDING:
            time.sleep(0.02)
    with _lock:
        _noticed[game_id] = None
        while len(_noticed) > _KNOWN:
            _noticed.popitem(last=False)


def forget() -> None:
    """Drop what this process knows (tests: a new database reuses ids)."""
    with _lock:
        _noticed.clear()
