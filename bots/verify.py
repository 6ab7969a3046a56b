"""Verification: does a bot speak protocol 1? Two checks, both over real HTTP:

1. The signature handshake: a correctly signed notice gets a 2xx, and three that must not be
   trusted are each refused with a 4xx (``REFUSALS``): one signed with a wrong secret, one with
   no signature headers at all, and one correctly signed but timestamped ``STALE_SECONDS``
   ago. A bot that accepts any of them could be driven by anyone (the unsigned one), or by
   anyone who once saw a call of it (the stale one, replayed). Every one of them is the
   validation game's start notice (the bot's seat in it).
2. A validation game: one single-hand game against a reference player (a random legal move,
   in this process), every decision of the bot asked over HTTP with the protocol's turn
   payload. Every answer must come in time, be JSON ``{"move": ...}`` and be legal. The game
   stops after the bot's ``DECISIONS``-th decision (or ends sooner), so the verdict rests on
   that many answers, never on how long a random game runs. Then the bot gets its end notice,
   as at any table (a failed one costs nothing); a game cut off that way ends
   ``interrupted``, with no replay.

The result and the reasons for a failure are stored on the bot; only verified, enabled bots
may enter tournaments. A URL change clears it (``services.bot_update``).
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from bots import runner, signing
from bots import services as bot_services
from bots import transport as bot_transport
from bots.errors import BotDisabled, VerificationRunning
from bots.models import Bot, CallKind
from games import selectors as game_selectors
from games import uno as engine

MAX_FAILURES = 3  # stop the game early: the verdict is clear and the owner waits for it
MAX_TURNS = 400
# The bot's decisions the validation game asks for, then stops (passed, unless one failed).
# A game played to its end was a lottery for a bot using most of its budget: the same bot
# (0.7 s of 1 s a turn) failed once after 64 turns, over the time limit, and passed once
# after 15. Twenty decisions see the usual situations (a draw and its keep-or-play, a wild's
# colour, often a Draw Four or a skip) and take at most 20 budgets.
DECISIONS = 20
# The verdict is answered within a request, which holds a server thread meanwhile and must end
# before the proxy gives up on it (nginx: 60 s). The validation game's time limit is sized from
# the decisions asked, a whole budget each, plus the server's own time (GAME_SLACK_SECONDS: the
# reference player's moves, the call log); where DECISIONS budgets would not fit in
# GAME_SECONDS (a budget over 2 s), fewer decisions are asked. A bot answering each call
# within its budget thus always finishes; the limit only stops a server that stalls.
# The handshake's notices (the signed one and the REFUSALS, one after another on the kept-alive
# connection: a bot serving one connection at a time passes too) and the end notice take at
# most NOTICE_TIMEOUT_SECONDS each beside it: 5 notices of 2 s and 45 s, within the 60.
GAME_SECONDS = 45
GAME_SLACK_SECONDS = 5
# The stale notice's age: twice the protocol's tolerance (``signing.TOLERANCE_SECONDS``), so a
# bot whose clock is a few minutes off still sees it as stale, and one that checks passes.
STALE_SECONDS = 600


def decisions_for(budget_ms: int) -> int:
    """How many of the bot's decisions the validation game asks for at this budget."""
    room_ms = (GAME_SECONDS - GAME_SLACK_SECONDS) * 1000
    return max(1, min(DECISIONS, room_ms // max(1, budget_ms)))


def time_limit(*, decisions: int, budget_ms: int) -> float:
    """The validation game's time limit, seconds: every decision a whole budget, plus the
    server's own time (at most GAME_SECONDS)."""
    return decisions * budget_ms / 1000 + GAME_SLACK_SECONDS


def _turn_payload(state: engine.GameState, seat: int, options: dict[str, Any], version: int,
                  budget: int, bot: Bot) -> dict[str, Any]:
    return runner.turn_payload(game_id=0, version=version, options=options, seat=seat,
                               view=engine.view(state, seat), budget=budget,
                               latency=runner.latencies.summary(bot.pk))


def _players(bot: Bot, bot_seat: int) -> list[str]:
    return [bot.label, "reference"] if bot_seat == 0 else ["reference", bot.label]


@dataclass(frozen=True)
class Refusal:
    """A notice the bot must refuse with a 4xx (401), and why, for the reason a failure
    gives."""

    sent: str  # "A notice <sent> got <the answer>: ..."
    must: str  # "... the bot must <must> and refuse it with a 4xx (401)."
    wrong_secret: bool = False
    unsigned: bool = False
    age_seconds: int = 0


REFUSALS = (
    Refusal("signed with a wrong secret", "check webhook-signature", wrong_secret=True),
    Refusal("with no webhook-id, webhook-timestamp or webhook-signature header",
            "check that a call carries its signature headers", unsigned=True),
    Refusal(f"correctly signed but with a webhook-timestamp {STALE_SECONDS // 60} minutes old",
            f"check webhook-timestamp (more than {signing.TOLERANCE_SECONDS // 60} minutes "
            "off its clock: a replayed call)", age_seconds=STALE_SECONDS),
)


def _handshake(bot: Bot, transport: bot_transport.BotTransport, options: dict[str, Any],
               bot_seat: int, reasons: list[str]) -> None:
    notice = {"protocol": runner.PROTOCOL, "type": "start", "game": 0, "version": 0,
              "seat": bot_seat, "options": options, "players": _players(bot, bot_seat)}
    good = transport.post_sync(bot.url, notice, secrets=bot_services.signing_secrets(bot),
                               timeout=runner.NOTICE_TIMEOUT_SECONDS)
    bot_services.call_record(bot_id=bot.pk, kind=CallKind.VERIFY, latency_ms=good.latency_ms,
                             status=good.status, error=good.error or "",
                             detail=good.detail if not good.ok else "signed notice")
    if good.status is None:  # nothing answered: whether it checks signatures is unknown
        reasons.append(f"Could not reach the bot at {bot.url}: {good.error} ({good.detail}).")
        return
    if not good.ok:
        reasons.append(f"A correctly signed notice failed: {good.error} ({good.detail}).")
    for refusal in REFUSALS:
        problem = _refused(bot, transport, notice, refusal)
        if problem:
            reasons.append(problem)


def _refused(bot: Bot, transport: bot_transport.BotTransport, notice: dict[str, Any],
             refusal: Refusal) -> str:
    """Send ``refusal``'s notice: "" when the bot refused it with a 4xx, else the reason. Not
    logged: a bot that refuses them as it should must not see failed calls in its counts."""
    secrets = [signing.new_secret()] if refusal.wrong_secret else (
        bot_services.signing_secrets(bot))
    signed_at = int(time.time()) - refusal.age_seconds if refusal.age_seconds else None
    sent = transport.post_sync(bot.url, notice, secrets=secrets, signed_at=signed_at,
                               unsigned=refusal.unsigned, timeout=runner.NOTICE_TIMEOUT_SECONDS)
    # Any 4xx is a refusal (401 is the one asked for): a bot that says 403 means the same.
    if sent.status is not None and 400 <= sent.status < 500:
        return ""
    got = sent.status if sent.status is not None else f"{sent.error} ({sent.detail})"
    return (f"A notice {refusal.sent} got {got}: the bot must {refusal.must} and refuse it "
            "with a 4xx (401).")


def _game(bot: Bot, transport: bot_transport.BotTransport, budget: int, seed: int,
          bot_seat: int, reasons: list[str]) -> int:
    """Play the validation game, then send its end notice; returns the bot's decisions."""
    options = engine.Options(players=2, single_hand=True)
    options_json = options.to_json()
    state = engine.new_game(options, seed)
    rng = random.Random(seed)
    log: list[dict[str, Any]] = []  # the replay's moves
    turns = failures = 0
    decisions = decisions_for(budget)
    limit = time_limit(decisions=decisions, budget_ms=budget)
    deadline = time.monotonic() + limit
    for step in range(MAX_TURNS):
        if state.finished or turns >= decisions:
            break
        if time.monotonic() > deadline:
            reasons.append(f"The validation game took longer than {limit:g} s for "
                           f"{decisions} decisions of {budget} ms: the server was too slow; "
                           "try again later.")
            break
        seat = state.awaiting
        assert seat is not None
        if seat != bot_seat:
            # random_move, not a uniform choice: that drags a hand past MAX_TURNS now and then,
            # failing a good bot for the reference player's dawdling.
            _play(state, seat, engine.random_move(engine.legal_moves(state, seat), rng),
                  "player", log)
            continue
        turns += 1
        payload = _turn_payload(state, seat, options_json, step, budget, bot)
        result = transport.post_sync(bot.url, payload, secrets=bot_services.signing_secrets(bot),
                                     timeout=budget / 1000)
        runner.latencies.add(bot.pk, result.latency_ms)
        move, error, detail = runner.judge(result)
        if move is not None:
            try:
                _play(state, seat, engine.Move.from_json(move), "player", log)
            except engine.MalformedMove as exc:
                error, detail = runner.MALFORMED, exc.reason
            except engine.IllegalMove as exc:
                error, detail = runner.ILLEGAL, exc.reason
        bot_services.call_record(bot_id=bot.pk, kind=CallKind.VERIFY,
                                 latency_ms=result.latency_ms, status=result.status,
                                 error=error, detail=detail or f"validation turn {turns}")
        if error:
            failures += 1
            reasons.append(f"Turn {turns}: {error} ({detail}).")
            _play(state, seat, engine.default_move(state, seat), "server", log)
            if failures >= MAX_FAILURES:
                reasons.append("Stopped the validation game after too many failures.")
                break
    else:
        reasons.append("The validation game did not end in time.")
    if state.finished or turns >= decisions:
        _end_notice(bot, transport, options_json, seed, bot_seat, state, log)
    return turns


def _play(state: engine.GameState, seat: int, move: engine.Move, source: str,
          log: list[dict[str, Any]]) -> None:
    """Apply ``move`` (the engine's errors propagate, logging nothing) and log it as the
    replay's moves are written."""
    engine.apply(state, seat, move)
    log.append({"number": len(log) + 1, "seat": seat, "move": move.to_json(), "source": source,
                "created_at": timezone.now()})


def _end_notice(bot: Bot, transport: bot_transport.BotTransport, options: dict[str, Any],
                seed: int, bot_seat: int, state: engine.GameState,
                moves: list[dict[str, Any]]) -> None:
    """The validation game's end notice, shaped as every table's (its replay is the replay
    endpoint's body: every move, every deal, the final state); logged, never part of the
    verdict. A game stopped after the decisions asked ends ``interrupted``, with no replay
    (as a cut-off tournament game's)."""
    replay = None
    if state.finished:
        result = {"winner": state.winner, "scores": state.scores, "end_reason": "match"}
        deals, final = game_selectors.replay_states(
            options=options, seed=seed, moves=[(m["seat"], m["move"]) for m in moves])
        replay = {"game": 0, "status": "finished", "end_reason": "match", "options": options,
                  "seed": seed, "players": _players(bot, bot_seat), "winner": state.winner,
                  "scores": state.scores, "moves": moves, "deals": deals, "final": final}
    else:
        result = {"winner": None, "scores": state.scores, "end_reason": "interrupted"}
    notice = {
        "protocol": runner.PROTOCOL, "type": "end", "game": 0, "version": len(moves),
        "seat": bot_seat, "options": options, "result": result, "replay": replay,
    }
    sent = transport.post_sync(bot.url, notice, secrets=bot_services.signing_secrets(bot),
                               timeout=runner.NOTICE_TIMEOUT_SECONDS)
    bot_services.call_record(bot_id=bot.pk, kind=CallKind.VERIFY, latency_ms=sent.latency_ms,
                             status=sent.status, error=sent.error or "",
                             detail=sent.detail if not sent.ok else "end notice")


DISABLED = "The bot is disabled: enable it to verify it (its last verdict stands)."


def verify(*, bot_id: int, transport: bot_transport.BotTransport | None = None,
           seed: int | None = None) -> dict[str, Any]:
    """Verify the bot and store the verdict. A disabled bot is not verified: 409
    ``bot_disabled``, its stored verdict left as it is."""
    bot = Bot.objects.get(pk=bot_id)
    if not bot.enabled:
        raise BotDisabled(DISABLED)
    transport = transport if transport is not None else bot_transport.default_transport()
    reasons: list[str] = []
    turns = 0
    seed = secrets.randbits(32) if seed is None else seed
    bot_seat = seed % 2  # either seat, so both first and second player get tried
    options = engine.Options(players=2, single_hand=True).to_json()
    _handshake(bot, transport, options, bot_seat, reasons)
    if not reasons:  # a bot that fails the handshake would fail every turn the same way
        budget = int(runner.budget_ms_for(turn_seconds=60))
        turns = _game(bot, transport, budget, seed, bot_seat, reasons)
    ok = not reasons
    bot_services.verification_record(bot_id=bot.pk, url=bot.url, ok=ok, reasons=reasons,
                                     details={"turns": turns})
    return {"bot": bot.pk, "verified": ok, "result": "passed" if ok else "failed",
            "reasons": reasons, "turns": turns}


_running_lock = threading.Lock()
_running: set[object] = set()  # users with a verification running in this process


@contextmanager
def one_at_a_time(user_id: object) -> Iterator[None]:
    """Hold the user's verification slot for the block, or refuse (429
    ``verification_running``): a verification holds a request thread for its whole game, so
    a user running several at once could take every thread of a web process."""
    with _running_lock:
        if user_id in _running:
            raise VerificationRunning()
        _running.add(user_id)
    try:
        yield
    finally:
        with _running_lock:
            _running.discard(user_id)
