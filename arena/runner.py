"""Plays one claimed match: its unrecorded games, several at once, each recorded as it ends.

``MatchRun.run`` (called by ``services.match_play`` after the claim):

1. Settles the games a dead worker left live on the match (``services.live_settle``): one
   that finished is recorded; one still running is aborted and dealt again from the same
   seed, so the tournament stays exactly replayable.
2. Plays the games not yet recorded, TOURNAMENT_MATCH_CONCURRENCY at a time (bot calls are
   I/O; SQLite, which takes one writer at a time, gets one). Each game: created with its
   bots seated and its planned seed, started, played by ``bots.runner.play_game`` in this
   thread (the bots' dispatcher leaves a driven game alone), recorded by
   ``services.game_record`` in one transaction.
3. A heartbeat thread renews the claim every TOURNAMENT_HEARTBEAT_SECONDS. When it cannot (the
   match was taken over, or ended) or the tournament is cancelled, no further game starts.
4. Ends the match (done, or cancelled) if the claim is still ours.

A disabled bot's seats are forfeited as its game starts; a bot that stops answering is struck
on each failed call and forfeited at the table's max strikes (``games.services``): either way
its games end, and the match goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from arena import services
from arena.models import Match, Tournament, TournamentGame, TournamentStatus
from bots import runner as bot_runner
from bots import transport as bot_transport
from bots.models import Bot
from games import services as game_services
from games.errors import GameNotRunning
from games.models import Game

log = logging.getLogger(__name__)


def concurrency() -> int:
    if connection.vendor == "sqlite":
        return 1  # one writer at a time: threads would only wait on the database lock
    return max(1, int(settings.TOURNAMENT_MATCH_CONCURRENCY))


class MatchRun:
    def __init__(
        self,
        match: Match,
        token: str,
        *,
        on_progress: Callable[[], None] | None = None,
        transport: bot_transport.BotTransport | None = None,
    ) -> None:
        self.match = match
        self.token = token
        self.tournament: Tournament = match.tournament
        self.on_progress = on_progress
        self.transport = transport
        self._stop = threading.Event()  # the claim is lost or the tournament cancelled
        self._done = threading.Event()  # the match's games are over (heartbeat ends)
        self._progress_lock = threading.Lock()

    # --- the match ------------------------------------------------------------------------
    def run(self) -> None:
        services.live_settle(match_id=self.match.pk, token=self.token)
        recorded = set(TournamentGame.objects.filter(match=self.match)
                       .values_list("number", flat=True))
        todo = [item for item in self.match.plan if item["number"] not in recorded]
        beat = threading.Thread(target=self._heartbeat, daemon=True,
                                name=f"match-{self.match.pk}-heartbeat")
        beat.start()
        try:
            workers = min(concurrency(), max(1, len(todo)))
            if workers == 1:
                for item in todo:
                    self._play(item, own_connection=False)
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="match") as pool:
                    for future in [pool.submit(self._play, item) for item in todo]:
                        future.result()
        finally:
            self._done.set()
            beat.join()
        services.match_end(match_id=self.match.pk, token=self.token,
                           cancelled=self._cancelled())

    def _cancelled(self) -> bool:
        return Tournament.objects.filter(
            pk=self.tournament.pk, status=TournamentStatus.CANCELLED).exists()

    def _heartbeat(self) -> None:
        period = float(settings.TOURNAMENT_HEARTBEAT_SECONDS)
        try:
            while not self._done.wait(period):
                try:
                    if not services.match_heartbeat(match_id=self.match.pk, token=self.token):
                        log.warning("match %s: claim lost, stopping", self.match.pk)
                        self._stop.set()
                    elif self._cancelled():
                        self._stop.set()
                except Exception:
                    # A database blip: try again next period (the claim goes stale only
                    # after several missed renewals).
                    log.exception("match %s: heartbeat failed", self.match.pk)
                    close_old_connections()
        finally:
            connection.close()

    # --- one game -------------------------------------------------------------------------
    def _play(self, item: dict[str, Any], *, own_connection: bool = True) -> None:
        if own_connection:
            close_old_connections()
        try:
            if self._stop.is_set() or self._cancelled():
                self._stop.set()
                return
            game = self._begin(item)
            if game is None:
                self._stop.set()
                return
            with bot_runner.budget(self.tournament.turn_timeout_ms):
                final = bot_runner.play_game(game.pk, transport=self.transport)
            if not final.is_over:  # cannot happen with bots only; never leave it running
                with suppress(GameNotRunning):
                    game_services.game_abort(game_id=game.pk)
            recorded = services.game_record(match_id=self.match.pk, token=self.token,
                                            number=item["number"], game_id=game.pk)
            if recorded and self.on_progress is not None:
                with self._progress_lock:
                    self.on_progress()
        finally:
            if own_connection:
                connection.close()

    def _begin(self, item: dict[str, Any]) -> Game | None:
        """Create and start the game; this process's bot dispatcher leaves it to us."""
        with ExitStack() as stack, transaction.atomic():
            game = services.game_begin(match_id=self.match.pk, token=self.token, item=item)
            if game is None:
                return None
            stack.enter_context(bot_runner.driving(game.pk))
            game = game_services.game_start(game_id=game.pk, user=self.tournament.owner)
            disabled = set(Bot.objects.filter(pk__in=item["seats"], enabled=False)
                           .values_list("pk", flat=True))
            for seat, bot in enumerate(item["seats"]):
                if bot in disabled and not game.is_over:
                    game = game_services.seat_forfeit(game_id=game.pk, seat=seat)
        return game
