"""Plays bot seats: one decision at a time (``play_turn``), or a whole game between bots
(``play_game``, for tests, the bench and tournament workers, with no broker involved).

A decision is named by (game id, version): the runner loads the game, checks the awaited seat
is a bot's and the version is current, POSTs the turn to the bot (``bots.transport``), and
applies the answer with ``games.services.move_play(expected_version=version)``. Whatever goes
wrong on the bot's side (no answer, a bad answer, an illegal move) makes the server play the
seat's default move and strike it (``games.services.seat_default``); at the table's
``max_strikes`` the seat is forfeited. A decision that went stale meanwhile (someone else
moved) is dropped: it changes nothing and costs no strike. The call's budget never runs past
the turn clock (``call_budget_ms``), so on a healthy server the clock never beats a bot that
answers in time; when it does (the server itself was slow), the call log says so (``clock``).
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson
from django.conf import settings
from rest_framework.utils.encoders import JSONEncoder

from bots import services as bot_services
from bots import transport as bot_transport
from bots.models import Bot, BotCall, CallKind
from games import clock, hooks, selectors, steps
from games import services as game_services
from games import uno as engine
from games.engine_state import load_state
from games.errors import (
    GameNotRunning,
    IllegalMoveError,
    MalformedMoveError,
    NotAPlayer,
    NotYourTurn,
    SeatForfeited,
    StaleVersion,
)
from games.models import Game, GameStatus, MoveRecord, MoveSource, Seat

log = logging.getLogger(__name__)

PROTOCOL = 1
# Strike reasons beyond the transport's error kinds.
MALFORMED, ILLEGAL, DISABLED = "malformed", "illegal", "disabled"
# What a decision came to (also the call log's ``outcome``). CLOCK: the turn clock played
# the seat (and struck it) before the bot's answer could be, or before it could be asked.
MOVED, STRUCK, STALE, SKIPPED = "move", "strike", "stale", "skip"
CLOCK = bot_services.CLOCK_OUTCOME
NOTICE_TIMEOUT_SECONDS = 2.0
_LOG_BATCH = 100  # calls a driven game writes to the log at once


def _transport(transport: bot_transport.BotTransport | None) -> bot_transport.BotTransport:
    return transport if transport is not None else bot_transport.default_transport()


def budget_ms(game: Game) -> int:
    return budget_ms_for(turn_seconds=game.turn_seconds)


# A driver's own per-decision limit for the games it plays in this thread (a tournament's
# ``turn_timeout_ms``), instead of BOTS_TURN_TIMEOUT_MS; see ``budget``.
_budget_ms: ContextVar[int | None] = ContextVar("bot_budget_ms", default=None)


@contextmanager
def budget(ms: int | None) -> Iterator[None]:
    """While the block runs, decisions in this thread get ``ms`` (still capped by
    BOTS_MAX_TIMEOUT_SECONDS and the table's turn clock)."""
    token = _budget_ms.set(ms)
    try:
        yield
    finally:
        _budget_ms.reset(token)


def budget_ms_for(*, turn_seconds: int) -> int:
    """A bot's time for one decision: the server's per-call limit (or the driver's, see
    ``budget``), never beyond the table's own turn clock."""
    limit = _budget_ms.get() or int(getattr(settings, "BOTS_TURN_TIMEOUT_MS", 1000))
    cap = int(getattr(settings, "BOTS_MAX_TIMEOUT_SECONDS", 10)) * 1000
    return max(1, min(limit, cap, turn_seconds * 1000))


# The server's own work around a live table's bot call, kept out of the call's budget: before
# the call, handing the turn to a worker, loading the game, building and signing the payload;
# after it, parsing the answer, locking the game and committing the move. The turn clock's
# deadline is set when the previous move commits, so a call given the table's whole
# ``turn_seconds`` would end after the clock; a bot answering in 930 ms of a 1 s budget was
# struck by the clock. A few ms on a healthy server; this leaves room for a busy one.
CLOCK_MARGIN_MS = 150


def call_budget_ms(game: Game) -> int:
    """The budget of a call asked now on ``game`` (a live table, its ``turn_deadline`` the
    awaited turn's): ``budget_ms``, but never more than what is left of the turn clock less
    CLOCK_MARGIN_MS, so that an answer within it is applied before the clock runs out. 0 when
    not even 1 ms is left: the bot is not asked, the clock decides."""
    budget = budget_ms(game)
    if game.turn_deadline is None:
        return budget
    left = (game.turn_deadline - clock.now()).total_seconds() * 1000 - CLOCK_MARGIN_MS
    return min(budget, int(left)) if left >= 1 else 0


# --- latency, as the bot sees it in its payload ------------------------------------------------
class _Window:
    """A bot's recent latencies, in arrival order and sorted, and their summary."""

    __slots__ = ("added", "ordered", "recent", "summary")

    def __init__(self, values: list[float], size: int) -> None:
        self.recent: deque[float] = deque(values, maxlen=size)
        self.ordered = sorted(self.recent)
        self.summary = percentiles(self.ordered)
        self.added = 0


class _Latencies:
    """Each bot's recent turn latencies in this process (seeded from the call log once), for
    the p50/p99 a turn payload tells the bot. Each window is kept sorted as it slides (one
    insertion and one removal per call) and its summary made then (every few calls once it is
    full), so a turn's payload takes it as it is: no sort, nothing computed."""

    WINDOW = 200
    SUMMARY_EVERY = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_bot: dict[int, _Window] = {}

    def add(self, bot_id: int, latency_ms: float) -> None:
        with self._lock:
            window = self._by_bot.get(bot_id)
            if window is None:
                return
            if len(window.recent) == self.WINDOW:
                del window.ordered[bisect.bisect_left(window.ordered, window.recent.popleft())]
            window.recent.append(latency_ms)
            bisect.insort(window.ordered, latency_ms)
            window.added += 1
            # A summary a few calls old tells the bot as much as a fresh one, and making it
            # was a tenth of a driven turn's own cost: made every SUMMARY_EVERY calls (every
            # call while the window is still filling).
            if window.added % self.SUMMARY_EVERY == 0 or len(window.ordered) < self.WINDOW:
                window.summary = percentiles(window.ordered)

    def seed(self, bot_id: int) -> None:
        """Read the bot's recent calls from the log, once per process (a database read: an
        async driver seeds its bots before its event loop asks for summaries)."""
        with self._lock:
            if bot_id in self._by_bot:
                return
        newest = (BotCall.objects.filter(bot_id=bot_id, kind=CallKind.TURN)
                  .order_by("-id").values_list("latency_ms", flat=True)[:self.WINDOW])
        recent = [v for v in reversed(newest) if v is not None]  # None: not called
        with self._lock:
            self._by_bot.setdefault(bot_id, _Window(recent, self.WINDOW))

    def summary(self, bot_id: int) -> dict[str, float | None]:
        self.seed(bot_id)
        return self.known(bot_id)

    def known(self, bot_id: int) -> dict[str, float | None]:
        """``summary`` without reading the log (a bot not seeded has none). Shared: do not
        change it."""
        window = self._by_bot.get(bot_id)  # a dict read is atomic; summaries are replaced
        return window.summary if window is not None else _NO_LATENCY


def percentiles(values: list[float]) -> dict[str, float | None]:
    """p50 and p99 (nearest rank) of sorted ``values``; None when there are none."""
    n = len(values)
    if not n:
        return {"p50_ms": None, "p99_ms": None}
    # Nearest rank: the ceil(n * p / 100)-th smallest value (n >= 1, so the index is >= 0).
    return {"p50_ms": round(values[-(-n * 50 // 100) - 1], 2),
            "p99_ms": round(values[-(-n * 99 // 100) - 1], 2)}


_NO_LATENCY: dict[str, float | None] = {"p50_ms": None, "p99_ms": None}
latencies = _Latencies()


# --- payloads ----------------------------------------------------------------------------------
def turn_payload(*, game_id: int, version: int, options: Any, seat: int, view: dict[str, Any],
                 budget: int, latency: dict[str, float | None]) -> dict[str, Any]:
    """A decision's body (protocol v1): every caller of a bot's turn, the driver's included."""
    return {
        "protocol": PROTOCOL, "type": "turn", "game": game_id, "version": version,
        "seat": seat, "options": options, "view": view,
        "legal_moves": view.get("legal_moves", []), "budget_ms": budget, "latency": latency,
    }


_REST_JSON = JSONEncoder()
_PLAIN_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def _plain(value: Any) -> Any:
    """JSON-ready, with dates as the REST API writes them (DRF's encoder takes whatever JSON
    has no type for). orjson both ways: an end notice's replay holds every move of a game,
    and the standard library's round trip of a 500-point game cost more than its recording."""
    return orjson.loads(orjson.dumps(value, default=_REST_JSON.default, option=_PLAIN_OPTIONS))


def notice_body(*, game: Game, kind: str, seats: list[Seat],
                replay: dict[str, Any] | None = None, with_replay: bool = True
                ) -> dict[str, Any]:
    """A notice's body but its ``seat`` (the same for every bot at the table: the replay is
    made once). An end notice's ``replay`` is null when ``with_replay`` is off or a
    ``games.hooks`` hold keeps the game's replay closed (its deal is still to be played)."""
    out: dict[str, Any] = {
        "protocol": PROTOCOL, "type": kind, "game": game.pk, "version": game.version,
        "options": game.options,
    }
    if kind == CallKind.START:
        out["players"] = [s.player for s in seats]
    else:
        out["result"] = {"winner": game.winner, "scores": game.scores,
                         "end_reason": game.end_reason}
        if not with_replay or hooks.replay_held(game):
            out["replay"] = None
        else:
            out["replay"] = _plain(replay if replay is not None
                                   else selectors.game_replay(game=game))
    return out


# --- one decision ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    game: Game
    seat: Seat
    bot: Bot


def awaited_bot(game_id: int, version: int) -> Turn | None:
    """The bot awaited at ``version``, or None (not running, moved on, a person's turn)."""
    game = Game.objects.filter(pk=game_id).first()
    if game is None or game.status != GameStatus.RUNNING or game.version != version:
        return None
    if steps.turn_clock_overdue(game):
        return None  # the clock decides this turn (and strikes); its change comes next
    seat = (Seat.objects.select_related("bot")
            .filter(game_id=game_id, index=game.awaiting).first())
    if seat is None or seat.bot is None or seat.forfeited:
        return None
    return Turn(game, seat, seat.bot)


def judge(result: bot_transport.CallResult) -> tuple[dict[str, Any] | None, str, str]:
    """(move, error kind, detail) from the bot's answer."""
    if not result.ok:
        return None, result.error or "status", result.detail
    body = result.body
    if not isinstance(body, dict) or not isinstance(body.get("move"), dict):
        return None, MALFORMED, 'The answer is not {"move": {...}}.'
    return body["move"], "", ""


def play_turn(
    game_id: int, version: int, *, transport: bot_transport.BotTransport | None = None
) -> str:
    """Play the bot decision awaited at (game, version). Returns MOVED, STRUCK, STALE or
    SKIPPED (nothing awaited of a bot at that version)."""
    turn = awaited_bot(game_id, version)
    if turn is None:
        return SKIPPED
    state = load_state(turn.game)
    outcome, _ = decide(turn, state, transport=transport, log=_record_now)
    return outcome


def _record_now(**call: Any) -> None:
    bot_services.call_record(**call)


@dataclass(frozen=True)
class Asked:
    """A bot call under way for the decision at ``call["version"]``."""

    call: dict[str, Any]  # the call log's keys
    future: Future[bot_transport.CallResult]
    timeout: float


def ask(turn: Turn, state: engine.GameState, *,
        transport: bot_transport.BotTransport | None) -> Asked | None:
    """Start ``turn``'s bot call on ``state`` (the game's engine state at the turn's version);
    the caller goes on meanwhile. None, nothing sent, when the turn clock leaves the call no
    time (``call_budget_ms``)."""
    game, seat, bot = turn.game, turn.seat.index, turn.bot
    budget = call_budget_ms(game)
    if budget < 1:
        return None
    payload = turn_payload(game_id=game.pk, version=game.version, options=game.options,
                           seat=seat, view=engine.view(state, seat), budget=budget,
                           latency=latencies.summary(bot.pk))
    future = _transport(transport).post_future(
        bot.url, payload, secrets=bot_services.signing_secrets(bot), timeout=budget / 1000
    )
    call = {"bot_id": bot.pk, "kind": CallKind.TURN, "game_id": game.pk,
            "version": game.version, "seat": seat}
    return Asked(call, future, budget / 1000)


def discard(asked: Asked | None, *, transport: bot_transport.BotTransport | None,
            log: Callable[..., None]) -> None:
    """Drop a call asked ahead on a version that never came (or was left): its answer is
    logged as stale and changes nothing."""
    if asked is None:
        return
    result = _transport(transport).result(asked.future, timeout=asked.timeout)
    log(**asked.call, latency_ms=result.latency_ms, status=result.status,
        error=result.error or "", detail=result.detail if not result.ok else "", outcome=STALE)


def decide(
    turn: Turn,
    state: engine.GameState,
    *,
    transport: bot_transport.BotTransport | None,
    log: Callable[..., None],
    seen: bool = False,
) -> tuple[str, game_services.MovePlayed | None]:
    """Ask ``turn``'s bot for its decision on ``state`` (the game's engine state at
    ``turn.game.version``) and apply it, or the default move and a strike. The call goes to
    ``log`` (keyword arguments of ``bots.services.call_record``).

    ``seen``: ``turn.game`` is the committed row with ``forfeited_seats`` counted, so a plain
    move may be written with one compare-and-set statement (``move_play(seen=...)``).
    Returns the outcome and, for a move, what ``move_play`` returned."""
    outcome, played, _ = _decide(turn, state, transport=transport, log=log, seen=seen)
    return outcome, played


def _decide(
    turn: Turn,
    state: engine.GameState,
    *,
    transport: bot_transport.BotTransport | None,
    log: Callable[..., None],
    seen: bool,
    asked: Asked | None = None,
    ahead: Callable[[game_services.MovePrepared], Asked | None] | None = None,
) -> tuple[str, game_services.MovePlayed | None, Asked | None]:
    """``decide``, with the call maybe ``asked`` already, and (with ``ahead`` and ``seen``) a
    plain move written while ``ahead`` asks the next decision on the move's result: the
    third value, None unless the move was written."""
    game, seat, bot = turn.game, turn.seat.index, turn.bot
    version = game.version
    call: dict[str, Any] = {"bot_id": bot.pk, "kind": CallKind.TURN, "game_id": game.pk,
                            "version": version, "seat": seat}
    if not bot.enabled:
        return (*_fail(turn, DISABLED, "The bot is disabled.", call, log, status=None,
                       latency=None), None)
    asked = asked or ask(turn, state, transport=transport)
    if asked is None:
        return (*_clock_decides(turn, call, log), None)
    result = _transport(transport).result(asked.future, timeout=asked.timeout)
    latencies.add(bot.pk, result.latency_ms)
    move, error, detail = judge(result)
    if move is not None:
        try:
            played, following = None, None
            if seen and ahead is not None:
                played, following = _play_ahead(game, seat, move, ahead, transport, log)
                seen = False  # the game was spent on the try: the locked path decides
            if played is None:
                played = game_services.move_play(
                    game_id=game.pk, seat=seat, move=move, expected_version=version,
                    seen=game if seen else None,
                )
        except (StaleVersion, NotYourTurn, GameNotRunning, SeatForfeited, NotAPlayer):
            # Too late: someone else moved the game on, or the turn clock played the seat.
            outcome = CLOCK if _clock_took(call) else STALE
            log(**call, latency_ms=result.latency_ms, status=result.status, outcome=outcome,
                strike=outcome == CLOCK)
            return outcome, None, None
        except MalformedMoveError as exc:
            error, detail = MALFORMED, str(exc.detail)
        except IllegalMoveError as exc:
            error, detail = ILLEGAL, str(exc.detail)
        else:
            log(**call, latency_ms=result.latency_ms, status=result.status, outcome=MOVED)
            return MOVED, played, following
    return (*_fail(turn, error, detail, call, log, status=result.status,
                   latency=result.latency_ms), None)


def _play_ahead(
    game: Game, seat: int, move: dict[str, Any],
    ahead: Callable[[game_services.MovePrepared], Asked | None],
    transport: bot_transport.BotTransport | None, log: Callable[..., None],
) -> tuple[game_services.MovePlayed | None, Asked | None]:
    """A plain move applied in memory, the next decision asked on its result, then the move
    written (the bot's call and the database's write overlap). Moves are still written one
    after another, each on the version before it: a call asked on a move that was not
    written (a lost compare-and-set) is discarded. (None, None): the caller's locked path
    decides the move (``game`` is spent either way)."""
    prepared = game_services.move_prepare(
        game, seat, game_services.parse_move(move), game.version, MoveSource.PLAYER
    )
    if prepared is None:
        return None, None
    following = ahead(prepared)
    try:
        played = game_services.move_commit(prepared)
    except BaseException:
        discard(following, transport=transport, log=log)
        raise
    if played is None:
        discard(following, transport=transport, log=log)
        return None, None
    return played, following


def _fail(turn: Turn, error: str, detail: str, call: dict[str, Any], log: Callable[..., None],
          *, status: int | None, latency: float | None) -> tuple[str, None]:
    struck = game_services.seat_default(
        game_id=turn.game.pk, seat=turn.seat.index, expected_version=call["version"],
        reason=error,
    )
    # Not struck here: the decision went stale, or the turn clock had run out (then
    # ``seat_default`` ran it, or someone else had) and its strike is this decision's.
    outcome = STRUCK if struck else CLOCK if _clock_took(call) else STALE
    log(**call, latency_ms=latency, status=status, error=error, detail=detail,
        outcome=outcome, strike=outcome != STALE)
    return outcome, None


def _clock_decides(turn: Turn, call: dict[str, Any], log: Callable[..., None]
                   ) -> tuple[str, None]:
    """The server got to the decision too late to ask the bot (less than the margin left of
    the turn clock): let the clock run out (at most CLOCK_MARGIN_MS from now) and play and
    strike the seat, as it does for a silent person. Logged as a call that was never sent."""
    deadline = turn.game.turn_deadline
    if deadline is not None:
        clock.sleep(max(0.0, (deadline - clock.now()).total_seconds()) + 0.001)
    game_services.turn_clock_enforce(game_id=turn.game.pk)
    took = _clock_took(call)
    log(**call, latency_ms=None, status=None,
        detail="Not called: the turn clock had no time left for the call.",
        outcome=CLOCK if took else STALE, strike=took)
    return (CLOCK if took else STALE), None


def _clock_took(call: dict[str, Any]) -> bool:
    """Whether the turn clock played the decision ``call`` was for: the move right after its
    version is the clock's, for its seat."""
    return MoveRecord.objects.filter(
        game_id=call["game_id"], version=call["version"] + 1, seat=call["seat"],
        source=MoveSource.CLOCK,
    ).exists()


# --- notices -----------------------------------------------------------------------------------
def send_notices(
    game_id: int,
    kind: str,
    *,
    transport: bot_transport.BotTransport | None = None,
    log: Callable[..., None] | None = None,
) -> int:
    """Tell every bot seated at the game that it started or ended (``kind``: "start" or
    "end"). Failures are logged (to ``log``, default the call log at once), never struck.
    Returns how many bots answered 2xx."""
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        return 0
    seats = list(Seat.objects.select_related("user", "bot").filter(game_id=game_id))
    answered = 0
    body: dict[str, Any] | None = None
    for seat in seats:
        bot = seat.bot
        if bot is None or not bot.enabled:
            continue
        body = body or notice_body(game=game, kind=kind, seats=seats)
        payload = {**body, "seat": seat.index}
        timeout = min(NOTICE_TIMEOUT_SECONDS, budget_ms(game) / 1000 * 2)
        result = _transport(transport).post_sync(
            bot.url, payload, secrets=bot_services.signing_secrets(bot), timeout=timeout
        )
        answered += result.ok
        (log or _record_now)(
            bot_id=bot.pk, kind=kind, latency_ms=result.latency_ms, status=result.status,
            error=result.error or "", detail=result.detail if not result.ok else "",
            game_id=game_id, version=game.version, seat=seat.index,
        )
    return answered


# --- a whole game, driven here -----------------------------------------------------------------
_driven: dict[int, int] = {}  # game id -> drivers (nested ``driving`` blocks) holding it
_driven_lock = threading.Lock()


def is_driven_here(game_id: int) -> bool:
    with _driven_lock:
        return game_id in _driven


def drive_begin(game_id: int) -> None:
    """``driving``'s start, for a driver whose games outlive a block (``bots.driver``)."""
    with _driven_lock:
        _driven[game_id] = _driven.get(game_id, 0) + 1


def drive_end(game_id: int) -> None:
    with _driven_lock:
        left = _driven.get(game_id, 0) - 1
        if left > 0:
            _driven[game_id] = left
        else:
            _driven.pop(game_id, None)


@contextmanager
def driving(game_id: int) -> Iterator[None]:
    """While the block runs, this process's change hook leaves the game to the caller, and
    the game schedules no turn-clock tasks (``games.hooks.is_driven``): the caller checks the
    clock before every decision, and a tournament's sweep takes over from a caller that dies."""
    drive_begin(game_id)
    try:
        yield
    finally:
        drive_end(game_id)


def play_game(
    game_id: int,
    *,
    transport: bot_transport.BotTransport | None = None,
    max_turns: int = 100_000,
    notices: bool = True,
    stop: Callable[[], bool] | None = None,
    pipeline: bool = False,
) -> Game:
    """Play a running game's bot seats until it ends or a person's decision is awaited, at
    full speed: no broker. Returns the game as it stands.

    A game whose every seat is a bot (and no ``stop`` or ``pipeline`` asked for) is played
    in memory and recorded whole by ``bots.driver`` (same rows, one transaction); the rest
    of this describes the per-move path, which games with people keep.

    ``stop``, asked before each decision: True leaves the game as it stands (a worker shutting
    down; its turn clock, still checked, settles the seat awaited if nobody drives it on).

    The seats are read once (they never change once a game runs) and each move's result is
    the next decision's game, so a plain turn costs one HTTP call and one compare-and-set
    statement; the call log is written in batches.

    ``pipeline``: a plain move is applied in memory, the next bot's call started on its
    result, and only then is the move written, so the database's write and the next bot's
    call overlap. Moves are still written in order, each with a compare-and-set on the
    version before it; when one is not written (someone else changed the game meanwhile), the
    call asked on it is discarded (logged as stale) and the game read again. Its cost: a bot
    asked ahead sees the move before it is written, so on a lost race it saw a move that
    never happened (the mover's card; as rare as a seat's clock running out mid-call)."""
    if stop is None and not pipeline and _all_bots(game_id):
        from bots.driver import Driver

        with Driver(transport=transport, notices=notices, budget_ms=_budget_ms.get(),
                    max_turns=max_turns) as driver:
            driver.play([game_id])
        return Game.objects.get(pk=game_id)
    pending = _CallBatch()
    asked: Asked | None = None  # the awaited decision's call, asked while its move was written
    with driving(game_id):
        if notices:
            send_notices(game_id, CallKind.START, transport=transport, log=pending.append_call)
        game: Game | None = None
        state: engine.GameState | None = None
        seats: dict[int, Seat] = {}

        def ahead(prepared: game_services.MovePrepared) -> Asked | None:
            """The next decision's call, if it is a bot's and nothing else is due first."""
            following = prepared.game
            seat = seats.get(following.awaiting) if following.awaiting is not None else None
            if (following.status != GameStatus.RUNNING or seat is None or seat.bot is None
                    or seat.forfeited or not seat.bot.enabled or (stop is not None and stop())):
                return None
            return ask(Turn(following, seat, seat.bot), prepared.state, transport=transport)

        try:
            for _ in range(max_turns):
                if stop is not None and stop():
                    break
                if game is None:  # (re)read after anything but a plain move
                    game = Game.objects.get(pk=game_id)
                    seats = {s.index: s for s in
                             Seat.objects.select_related("bot").filter(game_id=game_id)}
                    game.forfeited_seats = sum(s.forfeited for s in seats.values())
                    state = load_state(game) if game.state is not None else None
                if game.status != GameStatus.RUNNING or state is None:
                    break
                if steps.turn_clock_overdue(game):
                    game_services.turn_clock_enforce(game_id=game_id)
                    game = None
                    continue
                seat = seats.get(game.awaiting) if game.awaiting is not None else None
                if seat is None or seat.bot is None or seat.forfeited:
                    break  # a person's turn
                if asked is not None and asked.call["version"] != game.version:
                    discard(asked, transport=transport, log=pending.append_call)
                    asked = None  # asked on a version that was not written
                _, played, asked = _decide(
                    Turn(game, seat, seat.bot), state, transport=transport,
                    log=pending.append_call, seen=True, asked=asked,
                    ahead=ahead if pipeline else None,
                )
                if len(pending) >= _LOG_BATCH:
                    pending.flush()
                if played is None or played.game.status != GameStatus.RUNNING:
                    game = None
                else:
                    forfeited = game.forfeited_seats
                    game, state = played.game, played.state
                    game.forfeited_seats = forfeited
        finally:
            discard(asked, transport=transport, log=pending.append_call)  # the loop ended
        final = Game.objects.get(pk=game_id)
        if notices and final.is_over:
            send_notices(game_id, CallKind.END, transport=transport, log=pending.append_call)
        pending.flush()
    return final


def _all_bots(game_id: int) -> bool:
    seats = list(Seat.objects.filter(game_id=game_id).values_list("bot_id", flat=True))
    return bool(seats) and all(bot is not None for bot in seats)


class _CallBatch(list[dict[str, Any]]):
    """Calls a driven game writes to the log together."""

    def append_call(self, **call: Any) -> None:
        self.append(call)

    def flush(self) -> None:
        bot_services.calls_record(self)
        self.clear()
