"""Plays many all-bot games at once, in memory, on one event loop, and records each whole.

For a game whose every seat is a bot and that one process drives (a tournament's game, the
bench, ``bots.runner.play_game``): the engine state lives here, each decision builds the
seat's view and payload, asks the bot (``bots.transport``; many games' calls in flight on one
loop), and applies the answer, or the default move and a strike, in memory
(``games.memory.MemoryGame``: the same service code as the per-move path). The game is
written when it ends, when the driver stops, and at checkpoints in between (before the stored
turn clock could run out), each time in ONE transaction with a compare-and-set on the
version the stretch started from (``games.memory.stretch_record``); the call log follows in
bulk.

Threads: the event loop runs in the driver's own thread and never touches the database; the
thread that calls ``submit`` and ``results`` (``play``) does: it loads the games, records
them and writes the call log, while the loop goes on with the other games.

    with Driver(transport=transport) as driver:
        outcomes = driver.play([game.pk for game in games])

A driver that dies mid-game loses only the stretch not yet recorded: the stored game stands
at that stretch's start version, with its turn clock running (see docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from bots import runner
from bots import services as bot_services
from bots import transport as bot_transport
from bots.models import Bot, CallKind
from games import memory
from games.errors import IllegalMoveError, MalformedMoveError
from games.models import Game, Seat

log = logging.getLogger(__name__)

# The call log is written when this many calls are gathered, when no game is left in play,
# and on close: a write costs an insert, a counter update per bot and outcome and a prune per
# bot, which per game was half the statements of a tournament's game.
_FLUSH_CALLS = 500

# At most this many games' requests are served together (their records in one transaction).
_RECORD_TOGETHER = 32

# Failures that say nothing reached the bot, or nothing came back: no answer at all.
_UNANSWERED = frozenset({"timeout", "connect", "reset"})
# A bot is unresponsive once its calls went unanswered this many budgets in a row (and at
# least a table's max strikes of them): long enough that a bot merely overloaded by several of
# its games' calls at once (some time out, the next ones are answered) is not taken for dead.
_UNRESPONSIVE_BUDGETS = 2
# How often a driver reads its games' bots again (enabled, URL, signing secrets): a bot
# disabled, moved or given a new secret during a tournament is called accordingly within
# this long, its games in flight included.
_BOTS_REFRESH_SECONDS = 2.0

# An in-process bot: (url, payload) -> the answer, or None to call the URL over HTTP
# (bench/arena_inprocess.py).
Answer = Callable[[str, Mapping[str, Any]], "bot_transport.CallResult | None"]
_in_process: Answer | None = None


def answer_in_process(answer: Answer | None) -> None:
    """From now on, every ``Driver`` made without an ``answer`` of its own uses ``answer``
    (None: none). For benchmarks that answer bots in the worker's process
    (bench/arena_inprocess.py), whose drivers are made by code they do not call."""
    global _in_process
    _in_process = answer


@dataclass
class Outcome:
    """What became of a submitted game."""

    game_id: int
    game: Game | None = None  # the row as last recorded (None: never recorded)
    seats: list[Seat] | None = None  # its seats as last recorded (None: never recorded)
    recorded: bool = False  # the last stretch was written (False: lost to a change meanwhile)
    turns: int = 0  # bot answers applied as moves
    error: BaseException | None = None  # the driver's own failure (never a bot's)

    @property
    def finished(self) -> bool:
        return self.game is not None and self.game.is_over


@dataclass
class _Seat:
    index: int
    bot: Bot
    secrets: list[str]
    # The bot's facts a turn reads, as plain attributes (a model's ``pk`` is a property).
    bot_id: int = 0
    url: str = ""
    enabled: bool = True

    def __post_init__(self) -> None:
        self.bot_id, self.url, self.enabled = self.bot.pk, self.bot.url, self.bot.enabled

    def refresh(self, bot: Bot, secrets: list[str]) -> None:
        """The bot as read again (the loop reads these attributes at its next call)."""
        self.secrets, self.url, self.enabled = secrets, bot.url, bot.enabled


@dataclass
class _Play:
    """A game on the loop."""

    played: memory.MemoryGame
    seats: dict[int, _Seat]
    budget_ms: int
    start_body: dict[str, Any] | None
    record_at: float  # monotonic: record a checkpoint by then (the stored clock's half-life)
    outcome: Outcome
    group: object = None  # the caller's tag (a match): ``stop`` may stop one group's games
    turns: int = 0
    done: Future[Any] = field(default_factory=Future)


class Driver:
    """Plays submitted all-bot games concurrently on one event loop (see the module doc).

    ``transport``: the guarded transport (default: the process's). ``notices``: send start and
    end notices. ``budget_ms``: each decision's time (a tournament's ``turn_timeout_ms``;
    default ``BOTS_TURN_TIMEOUT_MS``), capped by the table's turn clock. ``answer``: answer
    some bots in-process instead of over HTTP (benchmarks). ``max_turns``: a game's bound.
    ``end_replays``: whether end notices carry the game's replay (off: null)."""

    def __init__(
        self,
        *,
        transport: bot_transport.BotTransport | None = None,
        notices: bool = True,
        budget_ms: int | None = None,
        answer: Answer | None = None,
        max_turns: int = 100_000,
        end_replays: bool = True,
    ) -> None:
        self.transport = transport or bot_transport.default_transport()
        self.notices = notices
        self.budget_ms = budget_ms
        self.answer = answer if answer is not None else _in_process
        self.max_turns = max_turns
        self.end_replays = end_replays
        self._stopping = threading.Event()
        # Groups stopped by ``stop(group=...)``: added by any thread, read on the loop (a set's
        # add and membership test are atomic under the interpreter lock).
        self._stopped_groups: set[object] = set()
        self._calls: deque[dict[str, Any]] = deque()  # the call log, appended on the loop
        self._inbox: queue.Queue[tuple[str, _Play, Future[Any] | None]] = queue.Queue()
        self._live: dict[int, _Play] = {}
        self._over: deque[_Play] = deque()  # done on the loop, not yet yielded by ``results``
        # (group, bot id) -> (calls unanswered in a row, monotonic time of the first of them);
        # and the bots found unresponsive, per group (both on the loop; read by
        # ``unresponsive``). Per group: a tournament's next match, played by the same driver,
        # gives a bot another chance, as a driver of its own would.
        self._unanswered: dict[tuple[object, int], tuple[int, float]] = {}
        self._unresponsive: set[tuple[object, int]] = set()
        self._bots_read_at = time.monotonic()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="bot-driver",
                                        daemon=True)
        self._thread.start()

    # --- the caller's thread ----------------------------------------------------------------
    def unresponsive(self, group: object = None) -> frozenset[int]:
        """The bots whose calls in ``group``'s games have gone unanswered (time-outs, refused
        or reset connections) for ``_UNRESPONSIVE_BUDGETS`` budgets and at least a table's max
        strikes in a row: a dead or hung bot. A tournament forfeits such a bot's seats in the
        games of the match it has yet to begin (arena.runner), instead of spending max
        strikes x the budget on each."""
        return frozenset(bot_id for of, bot_id in list(self._unresponsive) if of == group)

    def submit(self, game_id: int, *, loaded: tuple[Game, list[Seat]] | None = None,
               group: object = None) -> None:
        """Load a running all-bot game and start playing it (a database read here).
        ``loaded``: the game's row and seats (their bots with them) as the caller has just
        written them (``games.batch``), which spares the read. ``group``: a tag that
        ``stop(group=...)`` stops the game by."""
        played = (memory.MemoryGame(*loaded) if loaded is not None
                  else memory.MemoryGame.load(game_id))
        seats: dict[int, _Seat] = {}
        for seat in played.seats:
            if seat.bot is None:
                raise ValueError(f"game {game_id} has a seat no bot plays: use the per-move "
                                 "path (bots.runner) for games with people")
            runner.latencies.seed(seat.bot_id)
            seats[seat.index] = _Seat(seat.index, seat.bot, bot_services.signing_secrets(seat.bot))
        game = played.game
        if self.budget_ms is not None:
            with runner.budget(self.budget_ms):
                budget = runner.budget_ms(game)
        else:
            budget = runner.budget_ms(game)  # the caller's ``runner.budget``, or the setting
        start_body = None
        if self.notices and played.running and game.move_count == 0:
            start_body = runner.notice_body(game=game, kind=CallKind.START, seats=played.seats)
        runner.drive_begin(game_id)
        play = _Play(played, seats, budget, start_body, self._record_by(game),
                     Outcome(game_id, game=game), group)
        self._live[game_id] = play
        asyncio.run_coroutine_threadsafe(self._game(play), self._loop)

    def results(self, timeout: float | None = None) -> Iterator[Outcome]:
        """Serve the loop's requests (records, end notices' bodies) until every submitted game
        is done, yielding each game's ``Outcome`` as it ends. ``timeout``: give up waiting
        after that long without news (the games left go on)."""
        news_at = time.monotonic()
        while self._live:
            self._bots_refresh_when_due()
            if self._over:  # kept here, not in a local: a caller may stop iterating anytime
                play = self._over.popleft()
                self._live.pop(play.outcome.game_id, None)
                runner.drive_end(play.outcome.game_id)
                if len(self._calls) >= _FLUSH_CALLS or not self._live:
                    self.flush()
                yield play.outcome
                news_at = time.monotonic()
                continue
            wait = max(0.0, self._bots_read_at + _BOTS_REFRESH_SECONDS - time.monotonic())
            if timeout is not None:
                left = news_at + timeout - time.monotonic()
                if left <= 0:
                    return
                wait = min(wait, left)
            try:
                asked = [self._inbox.get(timeout=wait)]
            except queue.Empty:
                continue  # a refresh due, or the caller's timeout
            news_at = time.monotonic()
            while len(asked) < _RECORD_TOGETHER:  # and whatever else is waiting already
                try:
                    asked.append(self._inbox.get_nowait())
                except queue.Empty:
                    break
            self._serve_records([(play, reply) for kind, play, reply in asked
                                 if kind == "record" and reply is not None])
            # A game's last record was asked (and served) before its "done".
            self._over.extend(play for kind, play, _ in asked if kind == "done")

    def play(self, game_ids: Iterable[int]) -> list[Outcome]:
        """Submit every game and wait for all of them; outcomes in the order given."""
        ids = list(game_ids)
        for game_id in ids:
            self.submit(game_id)
        by_id = {outcome.game_id: outcome for outcome in self.results()}
        return [by_id[game_id] for game_id in ids]

    def stop(self, *, group: object = None) -> None:
        """No further decision (any thread) in any game, or in ``group``'s games only: each is
        recorded as it stands and ends up in ``results`` (running still; its turn clock takes
        over unless someone drives it on)."""
        if group is None:
            self._stopping.set()
        else:
            self._stopped_groups.add(group)

    def flush(self) -> None:
        """Write the call log gathered so far (one insert); ``results`` does it every
        ``_FLUSH_CALLS`` calls and when no game is left in play."""
        calls = []
        while self._calls:
            calls.append(self._calls.popleft())
        bot_services.calls_record(calls)

    def close(self) -> None:
        """Stop, record what is left, and end the loop (its connections closed). Again: a
        no-op."""
        if self._loop.is_closed():
            return
        self.stop()
        for _ in self.results():
            pass
        self.flush()
        asyncio.run_coroutine_threadsafe(self.transport.aclose(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def call_in_loop(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` on the driver's loop thread and return what it returns (a profiler's
        ``enable``: profilers are per thread)."""
        async def call() -> Any:
            return function()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(5)

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _bots_refresh_when_due(self) -> None:
        """Read the live games' bots again every ``_BOTS_REFRESH_SECONDS`` (one query): the
        loop's next calls then go where, and signed as, the bot now says, or not at all."""
        now = time.monotonic()
        if now < self._bots_read_at + _BOTS_REFRESH_SECONDS:
            return
        self._bots_read_at = now
        seats = [seat for play in list(self._live.values()) for seat in play.seats.values()]
        try:
            fresh = Bot.objects.in_bulk({seat.bot_id for seat in seats})
        except DatabaseError:  # the games go on as they were; the next refresh tries again
            log.warning("reading the bots again failed; next try in %s s",
                        _BOTS_REFRESH_SECONDS, exc_info=True)
            return
        for seat in seats:
            bot = fresh.get(seat.bot_id)
            if bot is not None:  # (a bot entered or seated cannot be deleted)
                seat.refresh(bot, bot_services.signing_secrets(bot))

    def _record_by(self, game: Game) -> float:
        """When a checkpoint is due: halfway to the stored turn clock's deadline."""
        from games import clock

        if game.turn_deadline is None:
            return time.monotonic() + game.turn_seconds / 2
        left = (game.turn_deadline - clock.now()).total_seconds()
        return time.monotonic() + max(0.0, left / 2)

    def _serve_records(self, asked: list[tuple[_Play, Future[Any]]]) -> None:
        """Record the games that asked, together (``memory.stretches_record``: one
        transaction); if that fails, each on its own, so one game's failure is its own."""
        if not asked:
            return
        if len(asked) > 1:
            try:
                recorded = memory.stretches_record(played=[play.played for play, _ in asked])
            except Exception:
                log.warning("recording %d games together failed; one by one", len(asked),
                            exc_info=True)
            else:
                for (play, reply), one in zip(asked, recorded, strict=True):
                    self._recorded(play, reply, one)
                return
        for play, reply in asked:
            self._serve_record(play, reply)

    def _serve_record(self, play: _Play, reply: Future[Any]) -> None:
        try:
            recorded = memory.stretch_record(played=play.played)
        except BaseException as exc:
            log.exception("game %s: recording failed", play.outcome.game_id)
            play.outcome.error = exc
            reply.set_result((False, None))
            return
        self._recorded(play, reply, recorded)

    def _recorded(self, play: _Play, reply: Future[Any], recorded: bool) -> None:
        """Tell the game's coroutine how its record went (and give it the end notice)."""
        try:
            play.outcome.recorded = recorded
            if not recorded:
                reply.set_result((False, None))
                return
            played = play.played
            game = played.game
            play.outcome.game, play.outcome.seats = game, played.seats
            play.record_at = self._record_by(game)
            body = None
            if self.notices and game.is_over:
                body = runner.notice_body(
                    game=game, kind=CallKind.END, seats=played.seats,
                    replay=played.replay() if self.end_replays else None,
                    with_replay=self.end_replays)
            reply.set_result((True, body))
        except BaseException as exc:
            log.exception("game %s: the end notice failed", play.outcome.game_id)
            play.outcome.error = exc
            reply.set_result((False, None))

    # --- the loop ---------------------------------------------------------------------------
    async def _ask_caller(self, kind: str, play: _Play) -> Any:
        reply: Future[Any] = Future()
        self._inbox.put((kind, play, reply))
        return await asyncio.wrap_future(reply)

    async def _game(self, play: _Play) -> None:
        try:
            await self._play(play)
        except BaseException as exc:  # the driver's own bug: leave the game as stored
            log.exception("game %s: driver failed", play.outcome.game_id)
            play.outcome.error = exc
        finally:
            play.outcome.turns = play.turns
            self._inbox.put(("done", play, None))

    async def _play(self, play: _Play) -> None:
        played = play.played
        if play.start_body is not None:
            await self._notify(play, play.start_body, CallKind.START)
        for _ in range(self.max_turns):
            if (not played.running or self._stopping.is_set()
                    or play.group in self._stopped_groups):
                break
            if not await self._turn(play):
                break
            if time.monotonic() >= play.record_at:
                recorded, _ = await self._ask_caller("record", play)
                if not recorded:
                    return  # someone changed the game meanwhile: it is not ours any more
        recorded, end_body = await self._ask_caller("record", play)
        if recorded and end_body is not None:
            await self._notify(play, end_body, CallKind.END)

    async def _turn(self, play: _Play) -> bool:
        """One decision. False: nothing a bot decides is awaited (should not happen)."""
        played = play.played
        seat_index = played.awaiting
        seat = play.seats.get(seat_index) if seat_index is not None else None
        if seat is None:
            return False
        game, game_id, version = played.game, play.outcome.game_id, played.version
        call = {"bot_id": seat.bot_id, "kind": CallKind.TURN, "game_id": game_id,
                "version": version, "seat": seat_index, "created_at": timezone.now()}
        if not seat.enabled:
            self._fail(play, seat_index, call, runner.DISABLED, "The bot is disabled.", None,
                       None)  # not called: no latency
            return True
        view = played.view(seat_index)
        payload = runner.turn_payload(
            game_id=game_id, version=version, options=game.options, seat=seat_index, view=view,
            budget=play.budget_ms, latency=runner.latencies.known(seat.bot_id))
        result = self.answer(seat.url, payload) if self.answer is not None else None
        if result is None:
            result = await self.transport.post_body(
                seat.url, bot_transport.encode(payload), secrets=seat.secrets,
                timeout=play.budget_ms / 1000)
        runner.latencies.add(seat.bot_id, result.latency_ms)
        move, error, detail = runner.judge(result)
        if move is not None:
            try:
                played.play(seat_index, move)
            except MalformedMoveError as exc:
                error, detail = runner.MALFORMED, str(exc.detail)
            except IllegalMoveError as exc:
                error, detail = runner.ILLEGAL, str(exc.detail)
            else:
                play.turns += 1
                self._unanswered.pop((play.group, seat.bot_id), None)
                call["latency_ms"], call["status"] = result.latency_ms, result.status
                call["outcome"] = runner.MOVED
                self._calls.append(call)
                return True
        self._fail(play, seat_index, call, error, detail, result.status, result.latency_ms)
        return True

    def _fail(self, play: _Play, seat: int, call: dict[str, Any], error: str, detail: str,
              status: int | None, latency: float | None) -> None:
        """The seat's default move and a strike (``games.services.seat_default``'s rules)."""
        self._note_unanswered(play, call["bot_id"], error)
        struck = play.played.default(seat, reason=error)
        self._calls.append({**call, "latency_ms": latency, "status": status, "error": error,
                            "detail": detail, "strike": struck,
                            "outcome": runner.STRUCK if struck else runner.STALE})

    def _note_unanswered(self, play: _Play, bot_id: int, error: str) -> None:
        """Count a failed decision towards the bot being unresponsive (see ``unresponsive``);
        an answered one (even a refused move) starts the count again."""
        key = (play.group, bot_id)
        if error not in _UNANSWERED:
            self._unanswered.pop(key, None)
            return
        now = time.monotonic()
        count, since = self._unanswered.get(key, (0, now))
        count += 1
        self._unanswered[key] = (count, since)
        quiet = now - since >= _UNRESPONSIVE_BUDGETS * play.budget_ms / 1000
        if (key not in self._unresponsive and quiet
                and count >= play.played.game.max_strikes):
            self._unresponsive.add(key)
            log.warning("bot %s: %d calls unanswered in %.1f s; unresponsive", bot_id, count,
                        now - since)

    async def _notify(self, play: _Play, body: dict[str, Any], kind: str) -> None:
        """A notice to every enabled bot at the table, all at once; failures only logged."""
        game = play.played.game
        timeout = min(runner.NOTICE_TIMEOUT_SECONDS, play.budget_ms / 1000 * 2)
        seats = [seat for seat in play.seats.values() if seat.enabled]

        encoded = bot_transport.encode(body)  # once for every seat (an end notice is big)

        async def one(seat: _Seat) -> None:
            sent_at, result = timezone.now(), None
            if self.answer is not None:
                result = self.answer(seat.url, {**body, "seat": seat.index})
            if result is None:
                # The body with the seat's own ``"seat"`` member added at its end.
                payload = b"%s,\"seat\":%d}" % (encoded[:-1], seat.index)
                result = await self.transport.post_body(
                    seat.url, payload, secrets=seat.secrets, timeout=timeout)
            self._calls.append({
                "bot_id": seat.bot_id, "kind": kind, "created_at": sent_at,
                "latency_ms": result.latency_ms,
                "status": result.status, "error": result.error or "",
                "detail": result.detail if not result.ok else "", "game_id": game.pk,
                "version": game.version, "seat": seat.index,
            })

        await asyncio.gather(*(one(seat) for seat in seats))


def play_games(game_ids: Iterable[int], **options: Any) -> list[Outcome]:
    """``Driver(**options).play(game_ids)``, the driver closed after."""
    with Driver(**options) as driver:
        return driver.play(game_ids)
