"""Each way a bot can fail a decision: the server plays the seat's default move, strikes the
seat with the reason, logs the call, and the game goes on. Real bot servers on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from bots import runner
from bots import services as bot_services
from bots.models import BotCall, BotCounter
from bots.serve import serve_in_thread
from bots.transport import BotTransport
from games.models import EventKind, GameEvent, GameStatus, MoveRecord, MoveSource, Seat
from tests.bots.fault_server import FaultServer, refused_url
from tests.bots.helpers import bot_table, register

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quick_bots")]


def _awaited(game_id: int) -> tuple[int, int]:
    from games.models import Game

    game = Game.objects.get(pk=game_id)
    return game.version, game.awaiting


def _assert_struck(game_id: int, seat: int, version: int, reason: str) -> None:
    from games.models import Game

    game = Game.objects.get(pk=game_id)
    assert game.status == GameStatus.RUNNING and game.version > version  # the game goes on
    default = MoveRecord.objects.filter(game_id=game_id, version__gt=version).first()
    assert default is not None and default.seat == seat and default.source == MoveSource.SERVER
    assert Seat.objects.get(game_id=game_id, index=seat).strikes == 1
    strike = GameEvent.objects.get(game_id=game_id, kind=EventKind.STRIKE)
    assert strike.seat == seat and strike.data["reason"] == reason
    call = BotCall.objects.get(game_id=game_id, version=version)
    assert (call.kind, call.error, call.outcome) == ("turn", reason, "strike")


FAULTS = [
    ("hang", "timeout"),
    ("slow", "timeout"),
    ("drip", "timeout"),
    ("reset", "reset"),
    ("hangup", "reset"),
    ("garbage", "reset"),
    ("status/500", "status"),
    ("status/404", "status"),
    ("redirect", "redirect"),
    ("not_json", "not_json"),
    ("huge", "too_large"),
    ("huge_chunked", "too_large"),
    ("malformed_move", "malformed"),
    ("illegal_move", "malformed"),  # an unknown card: not a move at all
    ("no_move", "malformed"),
    ("twice_move", "not_json"),  # {"move": ..., "move": ...}: which one was meant?
]


@pytest.mark.parametrize(("mode", "reason"), FAULTS)
def test_a_failing_bot_gets_the_default_move_a_strike_with_its_reason_and_a_log_entry(
    alice: Any, fault_bot: FaultServer, transport: BotTransport, mode: str, reason: str
) -> None:
    bots, game = _fault_table(alice, fault_bot, mode)
    version, seat = _awaited(game.pk)
    assert runner.play_turn(game.pk, version, transport=transport) == runner.STRUCK
    _assert_struck_once(bots[seat], game.pk, seat, version, reason)


def _fault_table(alice: Any, fault_bot: FaultServer, mode: str) -> tuple[list[Any], Any]:
    """Two of alice's bots answering in ``mode``, seated at a running game."""
    bots = [register(alice, f"f{i}", fault_bot.url_for(mode))[0] for i in range(2)]
    return bots, bot_table(alice, bots)


def _assert_struck_once(bot: Any, game_id: int, seat: int, version: int, reason: str) -> None:
    """``_assert_struck``, and the bot's counters show that one failed call and its strike."""
    _assert_struck(game_id, seat, version, reason)
    counters = dict(BotCounter.objects.filter(bot=bot).values_list("name", "count"))
    assert counters == {"calls": 1, "failed": 1, f"error:{reason}": 1, f"strike:{reason}": 1}


def test_a_refused_connection_is_a_connect_strike(alice: Any, transport: BotTransport) -> None:
    url, holder = refused_url()
    try:
        bots = [register(alice, f"r{i}", url)[0] for i in range(2)]
        game = bot_table(alice, bots)
        version, seat = _awaited(game.pk)
        assert runner.play_turn(game.pk, version, transport=transport) == runner.STRUCK
    finally:
        holder.close()
    _assert_struck(game.pk, seat, version, "connect")


def _illegal(view: dict[str, Any], rng: Any) -> dict[str, Any]:
    """A well-formed move the rules refuse: a card the seat does not hold (or an
    impossible keep)."""
    held = set(view["hand"])
    card = next(code for code in ("R0", "R1", "G2", "B3", "Y4", "R5") if code not in held)
    return {"type": "play", "card": card}


def test_an_illegal_move_is_an_illegal_strike(alice: Any, transport: BotTransport) -> None:
    registered = [register(alice, f"i{i}", "http://127.0.0.1:9/") for i in range(2)]
    url, stop = serve_in_thread(_illegal, [secret for _, secret in registered])
    try:
        bots = [bot_services.bot_update(bot=bot, data={"url": url}) for bot, _ in registered]
        game = bot_table(alice, bots)
        version, seat = _awaited(game.pk)
        assert runner.play_turn(game.pk, version, transport=transport) == runner.STRUCK
    finally:
        stop()
    _assert_struck(game.pk, seat, version, "illegal")
    assert BotCall.objects.get(game_id=game.pk, version=version).detail  # the engine's why


def test_a_bot_that_never_answers_is_forfeited_at_max_strikes_and_the_game_still_ends(
    alice: Any, fault_bot: FaultServer, transport: BotTransport
) -> None:
    silent, player, game = _silent_table(alice, fault_bot)
    game = runner.play_game(game.pk, transport=transport)
    assert game.status == GameStatus.FINISHED
    seat = _assert_forfeited_once(game.pk, silent)
    assert game.winner == 1 - seat.index  # the last one standing
    timeouts = BotCall.objects.filter(bot=silent, kind="turn", error="timeout", outcome="strike")
    assert timeouts.count() == 2
    # The notices went out, and their failures struck nobody.
    assert BotCall.objects.filter(bot=player, kind="end", error="").count() == 1


def _silent_table(alice: Any, fault_bot: FaultServer) -> tuple[Any, Any, Any]:
    """A bot that never answers, one that does, and a game between them (max strikes 2)."""
    silent, _ = register(alice, "silent", fault_bot.url_for("hang"))
    player, _ = register(alice, "player", fault_bot.url_for("ok"))
    return silent, player, bot_table(alice, [silent, player], max_strikes=2)


def _assert_forfeited_once(game_id: int, bot: Any) -> Seat:
    """``bot``'s seat was struck twice and forfeited, once."""
    seat = Seat.objects.get(game_id=game_id, bot=bot)
    assert seat.forfeited and seat.strikes == 2
    assert GameEvent.objects.filter(game_id=game_id, kind=EventKind.FORFEITED).count() == 1
    return seat


def test_a_flaky_bot_is_struck_for_each_failure_and_plays_the_rest(
    alice: Any, fault_bot: FaultServer, transport: BotTransport
) -> None:
    bots = [register(alice, f"flaky{i}", fault_bot.url_for("flaky"))[0] for i in range(2)]
    game = runner.play_game(bot_table(alice, bots, max_strikes=100).pk, transport=transport)
    assert game.status == GameStatus.FINISHED
    turns = BotCall.objects.filter(game_id=game.pk, kind="turn")
    struck = turns.filter(error="status", outcome="strike").count()
    moved = turns.filter(error="", outcome="move").count()
    assert struck and moved and struck + moved == turns.count()
    strikes = GameEvent.objects.filter(game_id=game.pk, kind=EventKind.STRIKE)
    assert strikes.count() == struck and {e.data["reason"] for e in strikes} == {"status"}
