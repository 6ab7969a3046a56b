"""Plays one claimed match: its unrecorded games, several at once, each recorded as it ends.

``MatchRun.run`` (called by ``services.match_play`` after the claim):

1. Settles the games a dead worker left live on the match (``services.live_settle``): one
   that finished is recorded; one still running is aborted and dealt again from the same
   seed, so the tournament stays exactly replayable.
2. Plays the games not yet recorded, TOURNAMENT_MATCH_CONCURRENCY at a time (bot calls are
   I/O; SQLite, which takes one writer at a time, gets one). Games are begun together (created
   with their bots seated and their planned seeds, and started: ``services.games_begin``, one
   transaction), played by ``bots.runner.play_game`` in player threads (the bots' dispatcher
   leaves a driven game alone), and the games that ended while the runner waited are
   recorded together (``services.games_record``, one transaction), so the fixed cost of a
   game's two transactions is shared by the games in flight.
3. A heartbeat thread renews the claim every TOURNAMENT_HEARTBEAT_SECONDS. When it cannot (the
   match was taken over, or ended) or the tournament is cancelled, no further game starts.
4. Ends the match (done, or cancelled) if the claim is still ours.

A disabled bot's seats are forfeited as its game starts; a bot that stops answering is struck
on each failed call and forfeited at the table's max strikes (``games.services``): either way
its games end, and the match goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable
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
            self._play_all(todo)
        finally:
            self._done.set()
            beat.join()
        services.match_end(match_id=self.match.pk, token=self.token,
                           cancelled=self._cancelled())

    def _play_all(self, todo: list[dict[str, Any]]) -> None:
        """Keep ``concurrency()`` games in flight: whenever games end, record them together
        (one transaction) and begin as many new ones together (another)."""
        width = min(concurrency(), max(1, len(todo)))
        waiting = deque(todo)
        failures: list[BaseException] = []
        with _Players(width, self._play_one) as players:
            while True:
                if waiting and not self._stop.is_set():
                    fresh = [waiting.popleft()
                             for _ in range(min(width - players.busy, len(waiting)))]
                    if fresh:
                        self._begin_and_hand(fresh, players)
                if not players.busy:
                    break
                finished = []
                for number, game_id, error in players.ended():
                    if error is not None:
                        failures.append(error)
                    elif game_id is not None:
                        finished.append((number, game_id))
                if finished:
                    self._record(finished)
                if not self._stop.is_set() and self._cancelled():
                    self._stop.set()
        if failures:
            raise failures[0]

    def _begin_and_hand(self, items: list[dict[str, Any]], players: _Players) -> None:
        if self._cancelled():
            self._stop.set()
            return
        games = self._begin(items)
        if games is None:  # the claim is gone
            self._stop.set()
            return
        for item, game in zip(items, games, strict=True):
            players.hand(item["number"], game.pk)

    def _record(self, finished: list[tuple[int, int]]) -> None:
        recorded = services.games_record(match_id=self.match.pk, token=self.token,
                                         finished=finished)
        if recorded and self.on_progress is not None:
            self.on_progress()

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
    def _play_one(self, game_id: int) -> int:
        """Play a begun game to its end (in a player thread); its id."""
        with bot_runner.budget(self.tournament.turn_timeout_ms):
            final = bot_runner.play_game(game_id, transport=self.transport)
        if not final.is_over:  # cannot happen with bots only; never leave it running
            with suppress(GameNotRunning):
                game_services.game_abort(game_id=game_id)
        return game_id

    def _begin(self, items: list[dict[str, Any]]) -> list[Game] | None:
        """Create and start the games in one transaction; this process's bot dispatcher
        leaves them to us. None if the claim is no longer ours."""
        with ExitStack() as stack, transaction.atomic():
            games = services.games_begin(match_id=self.match.pk, token=self.token, items=items)
            if games is None:
                return None
            disabled = set(Bot.objects.filter(
                pk__in={b for item in items for b in item["seats"]}, enabled=False,
            ).values_list("pk", flat=True))
            started = []
            for item, game in zip(items, games, strict=True):
                stack.enter_context(bot_runner.driving(game.pk))
                game = game_services.game_start(game_id=game.pk, user=self.tournament.owner)
                for seat, bot in enumerate(item["seats"]):
                    if bot in disabled and not game.is_over:
                        game = game_services.seat_forfeit(game_id=game.pk, seat=seat)
                started.append(game)
        return started


class _Players:
    """``width`` threads, each playing the games handed to it on its own database
    connection (kept for the match: a connection per game would cost a connect each). With
    a width of 1 a handed game is played at once in the caller's thread (and connection)."""

    def __init__(self, width: int, play: Callable[[int], int]) -> None:
        self._play = play
        self._inline = width == 1
        self._inbox: queue.SimpleQueue[tuple[int, int] | None] = queue.SimpleQueue()
        self._outbox: queue.SimpleQueue[tuple[int, int | None, BaseException | None]] = (
            queue.SimpleQueue())
        self.busy = 0
        self._threads = [] if self._inline else [
            threading.Thread(target=self._serve, daemon=True, name=f"match-player-{i}")
            for i in range(width)]

    def __enter__(self) -> _Players:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for _ in self._threads:
            self._inbox.put(None)
        for thread in self._threads:
            thread.join()

    def hand(self, number: int, game_id: int) -> None:
        self.busy += 1
        if self._inline:
            self._outbox.put(self._played(number, game_id))
        else:
            self._inbox.put((number, game_id))

    def _played(self, number: int, game_id: int) -> tuple[int, int | None, BaseException | None]:
        try:
            return number, self._play(game_id), None
        except Exception as exc:  # the match loop re-raises it once the others are recorded
            log.exception("game %s failed", game_id)
            return number, None, exc

    def ended(self) -> list[tuple[int, int | None, BaseException | None]]:
        """The games that ended since last asked (waits for one at least)."""
        out = [self._outbox.get()]
        while True:
            try:
                out.append(self._outbox.get_nowait())
            except queue.Empty:
                break
        self.busy -= len(out)
        return out

    def _serve(self) -> None:
        close_old_connections()
        try:
            while (job := self._inbox.get()) is not None:
                self._outbox.put(self._played(*job))
        finally:
            connection.close()
