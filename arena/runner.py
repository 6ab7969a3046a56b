"""Plays a claimed match, and then the tournament's next pending ones: their unrecorded
games, many at once on one event loop, each recorded as it ends.

``MatchRun.run`` (called by ``services.match_play`` after the claim):

1. Settles the games a dead worker left live on the match (``services.live_settle``): one
   that finished is recorded; one still running is aborted and dealt again from the same
   seed, so the tournament stays exactly replayable.
2. Plays the games not yet recorded, TOURNAMENT_MATCH_CONCURRENCY in flight at once, through
   one ``bots.driver.Driver`` (every seat is a bot: each game is played in memory on the
   driver's event loop and written whole when it ends, in one transaction). This thread does
   every database write: it begins games together (created with their bots seated and their
   planned seeds, and started: ``services.games_begin``, one transaction), hands them to the
   driver, records what the driver asks it to, and records the games that ended while it
   waited together (``records.games_record``, one transaction: their ``TournamentGame``
   rows, Elo and progress), so the fixed cost of beginning and recording a game is shared by
   the games in flight.
3. A heartbeat thread renews the claim every TOURNAMENT_HEARTBEAT_SECONDS. When it cannot (the
   match was taken over, or ended) or the tournament is cancelled, no further game starts.
4. Ends the match (done, or cancelled) if the claim is still ours.
5. With ``chain`` (TOURNAMENT_CHAIN_MATCHES, on by default): once the matches in play can
   begin no more games (all begun, or the rest waiting for a deal in play) and a slot is
   free, claims the tournament's next pending match and fills the free slots with its games,
   through the same driver (``_Chain``), and so on while matches are pending and the task's
   time limit can hold another. Without it a worker's slots drained with each match's last
   games: a match lasts as long as its slowest game (docs/scaling.md, "Matches chained in one
   task": with bots 20 ms away, a worker kept about half its slots busy). Each match taken on
   has its own claim (renewed by the one heartbeat thread), records and end, as if its own
   task played it; that task, when it comes, finds it claimed and does nothing. A match
   whose database work fails is dropped alone: its games stopped and left live on it, its
   claim left to go stale, no further match taken on; the others play to their end.

A disabled bot's seats are forfeited as its game starts; a bot that stops answering is struck
on each failed call and forfeited at the table's max strikes (``games.services``' rules):
either way its games end, and the match goes on. A bot whose calls all go unanswered (dead or
hung: ``bots.driver.Driver.unresponsive``) forfeits the match's games not yet begun as they
start, instead of costing each of them max strikes x the turn budget; the next match gives it
another chance.

A worker that dies mid-match loses only its games' unrecorded stretches: each stored game
stands at the version it was last written at, and the worker that takes the match over
aborts it and deals it again from the same seed (step 1).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import ExitStack, suppress
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from arena import records, services
from arena.models import Match, MatchStatus, Tournament, TournamentGame, TournamentStatus
from bots import driver
from bots import runner as bot_runner
from bots import transport as bot_transport
from games import services as game_services
from games.errors import GameNotRunning
from games.models import Game, Seat
from games.steps import FORFEIT_DISABLED, FORFEIT_UNRESPONSIVE

log = logging.getLogger(__name__)


# An ended game is recorded for the tournament (its progress, standings and Elo) together with
# the others that end meanwhile, but no later than this: with quick bots a whole batch ends in
# milliseconds, and with slow ones the progress still moves as games finish.
PROGRESS_WITHIN_SECONDS = 1.0


def concurrency() -> int:
    """Games in flight per match: they share one event loop, and this thread writes them."""
    return max(1, int(settings.TOURNAMENT_MATCH_CONCURRENCY))


class MatchRun:
    def __init__(
        self,
        match: Match,
        token: str,
        *,
        on_progress: Callable[[], None] | None = None,
        transport: bot_transport.BotTransport | None = None,
        answer: driver.Answer | None = None,
        chain: bool = False,
    ) -> None:
        self.match = match
        self.token = token
        self.tournament: Tournament = match.tournament
        self.on_progress = on_progress
        self.transport = transport
        self.answer = answer  # None: over HTTP (or the process's, bots.driver.answer_in_process)
        self.chain = chain  # play the tournament's next pending matches too (see ``run``)
        self._stop = threading.Event()  # the claim is lost or the tournament cancelled
        self._known: dict[int, tuple[Game, list[Seat]]] = {}  # ended games, as just written
        self._playing: driver.Driver | None = None  # while the match's games are played
        self._claim_lost = False  # the heartbeat found the match taken over
        self._failures: list[BaseException] = []  # the driver's own, on this match's games
        # The games: planned and not begun; in flight (game id -> number); ended, not yet
        # recorded for the tournament (number, game id), and by when they are due.
        self._waiting: deque[dict[str, Any]] = deque()
        self._deal_of: dict[int, object] = {}
        self._numbers: dict[int, int] = {}
        self._ended: list[tuple[int, int]] = []
        self._record_by: float | None = None

    # --- the match ------------------------------------------------------------------------
    def run(self) -> None:
        """Play the match's unrecorded games, TOURNAMENT_MATCH_CONCURRENCY in flight at once,
        and end it. With ``chain``, go on with the tournament's next pending matches in the
        slots its last games leave free (``_Chain``; the module's step 5). Raises the first
        failure (the driver's own, or a match's database work) once the other matches are
        over: the failed match's claim goes stale, and the sweep resends it.
        """
        self._open()
        chain = _Chain(self)
        chain.play()
        if chain.failures:
            raise chain.failures[0]

    def _open(self) -> None:
        """Settle what a dead worker left live on the match, and plan the games left."""
        services.live_settle(match_id=self.match.pk, token=self.token)
        recorded = set(TournamentGame.objects.filter(match=self.match)
                       .values_list("number", flat=True))
        self._waiting = deque(item for item in self.match.plan
                              if item["number"] not in recorded)
        self._deal_of = {item["number"]: _deal(item) for item in self._waiting}

    def _all_begun(self) -> bool:
        return not self._waiting or self._stop.is_set()

    def _over(self) -> bool:
        """Nothing left to begin, and nothing in flight: the match can be ended."""
        return self._all_begun() and not self._numbers

    def _record_when_due(self, width: int) -> None:
        """Record the games that ended for the tournament together (``TournamentGame`` rows,
        Elo, progress: one transaction) once there are as many as games in flight, when the
        first of them ended PROGRESS_WITHIN_SECONDS ago, and when none is left in flight: a
        game is already written whole when it ends, and one left unrecorded by a worker that
        died is recorded as it is by the next (``services.live_settle``). Before beginning
        more: a cancel (or a lost claim) that the record reveals then stops the next begin, so
        at most the games in flight finish."""
        due = self._record_by is not None and time.monotonic() >= self._record_by
        if self._ended and (len(self._ended) >= width or not self._numbers or due):
            self._record(self._ended)
            self._ended, self._record_by = [], None

    def _begin_into(self, room: int, owner: dict[int, MatchRun]) -> None:
        """Begin up to ``room`` games together (one transaction each time) and hand them to the
        driver; again while some were over as they began."""
        while not self._all_begun() and room > 0:
            in_play = {self._deal_of[number] for number in self._numbers.values()}
            fresh = _next_seatings(self._waiting, room, in_play)
            if not fresh:  # every game left is of a deal in play: they wait for it
                return
            before = len(self._numbers)
            self._note_ended(self._begin_and_hand(fresh))  # those over as they began
            for game_id in self._numbers.keys() - owner.keys():
                owner[game_id] = self
            room -= len(self._numbers) - before

    def _settle(self, outcome: driver.Outcome) -> None:
        """A game of this match that the driver is done with."""
        number = self._numbers.pop(outcome.game_id)
        if outcome.error is not None:  # the driver's own failure: the sweep takes the match
            self._failures.append(outcome.error)  # over
            return
        if not outcome.recorded:  # someone changed it meanwhile (whatever the game in memory
            # came to: ``finished`` is of that, not the row)
            if self._cut_off(outcome.game_id, number):
                return  # left live on the match: its next worker deals it again
        elif not outcome.finished and self._claim_lost:
            return  # stopped here, running still: its next worker deals it again
        elif not outcome.finished:  # the driver left it unfinished (its turn bound)
            with suppress(GameNotRunning):
                game_services.game_abort(game_id=outcome.game_id)
        elif outcome.recorded and outcome.seats is not None:
            assert outcome.game is not None  # finished
            self._known[outcome.game_id] = (outcome.game, outcome.seats)
        self._note_ended([(number, outcome.game_id)])

    def _note_ended(self, ended: list[tuple[int, int]]) -> None:
        """Games to record for the tournament: due PROGRESS_WITHIN_SECONDS after the first
        of them ended since the last record."""
        self._ended.extend(ended)
        if self._ended and self._record_by is None:
            self._record_by = time.monotonic() + PROGRESS_WITHIN_SECONDS

    def _end(self) -> None:
        """Record the last games, and end the match (done, or cancelled) if the claim is still
        ours; not after the driver's own failure on one of its games (it stays claimed: the
        sweep resends it once the claim is stale)."""
        if self._ended:
            self._record(self._ended)
            self._ended, self._record_by = [], None
        if not self._failures:
            services.match_end(match_id=self.match.pk, token=self.token,
                               cancelled=self._cancelled())

    def _begin_and_hand(self, items: list[dict[str, Any]]) -> list[tuple[int, int]]:
        """Begin ``items`` and hand them to the driver; the games over at once (every seat
        but one forfeited at the start), to be recorded."""
        playing = self._playing
        assert playing is not None  # (set by the chain before any begin)
        begun = self._begin(items, unresponsive=playing.unresponsive(self.match.pk))
        if begun is None:  # the claim is gone, or the tournament cancelled
            self._stop.set()
            return []
        over = []
        for item, (game, seats) in zip(items, begun, strict=True):
            if game.is_over:
                over.append((item["number"], game.pk))
                continue
            playing.submit(game.pk, loaded=(game, seats) if seats else None,
                           group=self.match.pk)
            self._numbers[game.pk] = item["number"]
        return over

    def _cut_off(self, game_id: int, number: int) -> bool:
        """Someone changed the game while it was played here (its record lost the
        compare-and-set). Over already: staff aborted it (recorded as it stands), or the match
        was taken over from this worker (stopped, then resumed) and its new worker aborted it
        (recording it is then refused: the claim is gone). Still running, it is aborted
        "interrupted", as a taken-over match's games are, and not recorded: it stays live on
        the match, so whoever plays the match next deals it again from its seed (this worker's
        claim, if still held, ends with a game unrecorded and goes stale). True if so."""
        try:
            game_services.game_abort(game_id=game_id, reason="interrupted")
        except GameNotRunning:
            return False
        log.warning("match %s: game %s (number %s) was changed while played here; aborted as "
                    "interrupted, to be dealt again", self.match.pk, game_id, number)
        return True

    def _record(self, finished: list[tuple[int, int]]) -> None:
        recorded = records.games_record(
            match_id=self.match.pk, token=self.token, finished=finished,
            known={game_id: self._known.pop(game_id) for _, game_id in finished
                   if game_id in self._known})
        if recorded and self.on_progress is not None:
            self.on_progress()

    def _cancelled(self) -> bool:
        return Tournament.objects.filter(
            pk=self.tournament.pk, status=TournamentStatus.CANCELLED).exists()

    def _renew(self) -> None:
        """The heartbeat's work for this match: renew the claim, or stop on its loss (its
        games in flight too) or on the tournament's cancel."""
        if not services.match_heartbeat(match_id=self.match.pk, token=self.token):
            if not self._claim_lost:
                log.warning("match %s: claim lost, stopping", self.match.pk)
            self._claim_lost = True
            self._stop.set()
            # Its games in flight too, at once: the match's new worker deals them again from
            # their seeds, and the same deck in two games at a time would show a bot in one
            # what its opponent draws in the other.
            if self._playing is not None:
                self._playing.stop(group=self.match.pk)
        elif self._cancelled():
            self._stop.set()

    # --- beginning games ----------------------------------------------------------------
    def _begin(self, items: list[dict[str, Any]], *, unresponsive: frozenset[int] = frozenset()
               ) -> list[tuple[Game, list[Seat]]] | None:
        """Create and start the games together (``services.games_begin``), marked driven here
        before they commit so that this process's bot dispatcher leaves them to the driver; a
        disabled bot's seats forfeited, and those of a bot this match found ``unresponsive``
        (``bots.driver.Driver.unresponsive``: dead or hung; that game's seats then read again
        by the driver: an empty list). None if the claim is no longer ours."""
        with ExitStack() as stack, transaction.atomic():
            begun = services.games_begin(match_id=self.match.pk, token=self.token, items=items)
            if begun is None:
                return None
            for game, _ in begun:
                stack.enter_context(bot_runner.driving(game.pk))
            out: list[tuple[Game, list[Seat]]] = []
            for game, seats in begun:
                forfeits = {  # seat -> why (the bots were read with the seats)
                    s.index: FORFEIT_DISABLED if not s.bot.enabled else FORFEIT_UNRESPONSIVE
                    for s in seats if not s.bot.enabled or s.bot_id in unresponsive}
                if forfeits:  # all at once: a table of disabled bots has no winner
                    game = game_services.seats_forfeit(game_id=game.pk, reasons=forfeits)
                out.append((game, [] if forfeits else seats))
        return out


class _Chain:
    """The matches one task plays through one driver: its own, and (``MatchRun.chain``) the
    tournament's next pending ones, each claimed once the matches in play can begin no more
    games and a slot is free. One heartbeat thread renews every claim held. A match whose
    database work fails is dropped alone (its games stopped and left live on it, its claim
    left to go stale: the sweep resends it), and the others play on."""

    def __init__(self, first: MatchRun) -> None:
        self.first = first
        self.runs: list[MatchRun] = [first]  # being played, oldest first
        self.failures: list[BaseException] = []
        self._lock = threading.Lock()  # ``runs``, also read by the heartbeat
        self._done = threading.Event()  # every match is over (the heartbeat ends)
        self._owner: dict[int, MatchRun] = {}  # game id in flight -> its match
        self._started = time.monotonic()
        self._opened: dict[int, float] = {first.match.pk: self._started}  # match -> monotonic
        self._longest = 0.0  # the longest a match of this chain took, seconds
        self._claiming = first.chain  # off once none is left, or after a failure
        self._driver: driver.Driver | None = None  # while the matches are played

    def play(self) -> None:
        first = self.first
        beat = threading.Thread(target=self._heartbeat, daemon=True,
                                name=f"match-{first.match.pk}-heartbeat")
        beat.start()
        try:
            # End notices without the replay: a tournament's games share deals (duplicate
            # deals; a game cut off by a dead worker is dealt again), so one game's seed would
            # show a bot the hands of a game it still plays. The replays open when the
            # tournament ends.
            with driver.Driver(transport=first.transport,
                               budget_ms=first.tournament.turn_timeout_ms,
                               answer=first.answer, end_replays=False) as playing:
                first._playing = self._driver = playing
                self._play(playing)
        finally:
            self._done.set()
            beat.join()

    def _play(self, playing: driver.Driver) -> None:
        """Keep ``concurrency()`` games in flight across the matches: whenever games end,
        record them for their matches (when due), begin as many new ones, the oldest match's
        first, and end each match once its last game is recorded."""
        width = concurrency()
        owner = self._owner
        while self.runs:
            for run in list(self.runs):
                self._guarded(run, run._record_when_due, width)
            for run in list(self.runs):
                self._guarded(run, run._begin_into, width - len(owner), owner)
            # A slot still free: the matches in play have nothing left they may begin now.
            taken = (bool(self.runs) and len(owner) < width
                     and self._next_match() is not None)
            # Before going round again: a match taken on whose games were all over as they
            # began (its bots disabled) ends now, not once no further match is left to take.
            for run in [run for run in self.runs if run._over()]:
                with self._lock:  # no renewal of a claim that is about to end
                    self.runs.remove(run)
                self.failures.extend(run._failures)
                self._longest = max(self._longest,
                                    time.monotonic() - self._opened[run.match.pk])
                self._guarded(run, run._end)
            if taken:  # its games begin on the next round
                continue
            if not owner:  # each match left has games to begin, with every slot free
                continue
            due = [run._record_by for run in self.runs if run._record_by is not None]
            wait = max(0.0, min(due) - time.monotonic()) if due else None
            for outcome in _ended(playing, wait):
                run = owner.pop(outcome.game_id, None)
                if run is not None:  # (None: its match was dropped; the game left as is)
                    self._guarded(run, run._settle, outcome)

    def _guarded(self, run: MatchRun, step: Callable[..., Any], *args: Any) -> None:
        """One match's step; if it fails (the database), that match alone is dropped."""
        try:
            step(*args)
        except Exception as exc:
            log.exception("match %s: failed; its claim is left to go stale", run.match.pk)
            # A connection that broke outside a transaction (a restart, a failover) stays
            # broken until closed (Django reopens one at a request's end, and this is no
            # request): the next match's step then opens a new one.
            if not connection.in_atomic_block:
                connection.close_if_unusable_or_obsolete()
            self._drop(run, exc)

    def _drop(self, run: MatchRun, exc: BaseException) -> None:
        """Stop the match's games (left running, live on the match: whoever takes it over
        deals them again), stop renewing its claim, and take on no further match (the
        database may be failing). Its failure is raised once the others are over."""
        self.failures.append(exc)
        self._claiming = False
        run._stop.set()
        if self._driver is not None:
            self._driver.stop(group=run.match.pk)
        for game_id in [game for game, of in self._owner.items() if of is run]:
            del self._owner[game_id]
        with self._lock:
            if run in self.runs:
                self.runs.remove(run)

    def _next_match(self) -> MatchRun | None:
        """Claim the tournament's next pending match (the lowest number another task has not
        claimed yet), add it to the runs and open it; None if the chain is off, its time is
        short (``_time_left``), a match here was stopped (claim lost, or the tournament
        cancelled), or none is left."""
        first = self.first
        if (not self._claiming or not self._time_left()
                or any(run._stop.is_set() for run in self.runs)):
            return None
        try:
            claimed = self._claim_next()
        except Exception:  # the database: the matches in play go on, no other is taken on
            log.exception("match %s: could not take on a next match", first.match.pk)
            self._claiming = False
            return None
        if claimed is None:
            return None
        match, token = claimed
        taken = MatchRun(match, token, on_progress=first.on_progress,
                         transport=first.transport, answer=first.answer)
        taken._playing = self._driver
        with self._lock:  # renewed from now on
            self.runs.append(taken)
        self._opened[match.pk] = time.monotonic()
        self._guarded(taken, taken._open)
        return taken

    def _claim_next(self) -> tuple[Match, str] | None:
        """The lowest-numbered pending match of the tournament that this claim wins, and the
        claim's token."""
        pending = list(Match.objects.filter(
            tournament_id=self.first.tournament.pk, status=MatchStatus.PENDING,
            tournament__status=TournamentStatus.RUNNING,
        ).order_by("number").values_list("pk", flat=True)[:4])
        if not pending:  # and none will be again: only a start makes pending matches
            self._claiming = False
        for match_id in pending:
            token = services.match_claim(match_id=match_id)
            if token is not None:  # (None: another worker's since the read)
                return Match.objects.select_related("tournament").get(pk=match_id), token
        return None

    def _time_left(self) -> bool:
        """Whether a match taken on now should end within the task's hard time limit
        (TOURNAMENT_MATCH_TIME_LIMIT, which kills the whole chain): at most half of it gone,
        and room for twice the longest match seen (the oldest one playing counts as long as
        it has run so far)."""
        now = time.monotonic()
        limit = float(settings.TOURNAMENT_MATCH_TIME_LIMIT)
        oldest = max((now - self._opened[run.match.pk] for run in self.runs), default=0.0)
        longest = max(self._longest, oldest)
        return now - self._started < limit / 2 and now - self._started + 2 * longest < limit

    def _heartbeat(self) -> None:
        period = float(settings.TOURNAMENT_HEARTBEAT_SECONDS)
        try:
            while not self._done.wait(period):
                with self._lock:
                    for run in self.runs:
                        try:
                            run._renew()
                        except Exception:
                            # A database blip: try again next period (the claim goes stale
                            # only after several missed renewals).
                            log.exception("match %s: heartbeat failed", run.match.pk)
                            close_old_connections()
        finally:
            connection.close()


def _deal(item: dict[str, Any]) -> object:
    """The deal a planned game plays: its seatings share it, and the seed."""
    return item.get("deal", ("game", item["number"]))


def _next_seatings(
    waiting: deque[dict[str, Any]], room: int, in_play: set[object]
) -> list[dict[str, Any]]:
    """Up to ``room`` games from ``waiting``, in their order, none of a deal in play or two of
    one deal: the seatings of a duplicate deal are played one after another, never side by
    side. In the twin game a bot holds the very hand its opponent holds in the other: it
    could read that hand live from its own turns. (That a bot may remember a deal it played
    is in docs/ratings.md.) The games skipped keep their places, first in line."""
    picked: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    taken = set(in_play)
    while waiting and len(picked) < room:
        item = waiting.popleft()
        if (deal := _deal(item)) in taken:
            skipped.append(item)
        else:
            picked.append(item)
            taken.add(deal)
    waiting.extendleft(reversed(skipped))
    return picked


def _ended(playing: driver.Driver, wait: float | None) -> list[driver.Outcome]:
    """The games that ended since last asked: waits for one (recording what the driver asks
    meanwhile; at most ``wait`` seconds without news, None: until one ends), then takes every
    other one already over without waiting."""
    out: list[driver.Outcome] = []
    for outcome in playing.results(timeout=wait):
        out.append(outcome)
        break
    out.extend(playing.results(timeout=0))
    return out
