"""A person against an HTTP bot at a live table while the broker cannot take the bot's
decisions (Redis stopped, or stalled with SIGSTOP): the web process plays them on its own
thread runner, so the bot is asked and plays, and is never struck for our outage. A real
gunicorn with a broken broker, a real reference bot on 127.0.0.1."""

from __future__ import annotations

import time
from typing import Any

import pytest

from arena.accounts.services import token_create
from bots import services as bot_services
from bots.models import BotCall
from bots.serve import serve_in_thread
from games.models import MoveRecord, MoveSource, Seat
from tests.bots.helpers import register
from tests.live_server import broken_broker, call, live_server

pytestmark = pytest.mark.django_db(transaction=True)

BOT_MOVES = 3  # the bot's decisions the test waits for (a single hand takes at least 7)


@pytest.mark.parametrize("kind", ["dead", "stalled"])
def test_a_bot_at_a_live_table_plays_its_turns_when_the_broker_is_down(
    alice: Any, bob: Any, kind: str
) -> None:
    bot, secret = register(alice, "outage-bot", "http://127.0.0.1:9/")
    url, stop = serve_in_thread("greedy", secret, seed=bot.pk)
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        with broken_broker(kind) as broker_url, live_server(
                {"CELERY_BROKER_URL": broker_url, "BOTS_ALLOW_PRIVATE": "true"}) as port:
            gid = _table_against_the_bot(port, keys, bot.pk)
            _play_until_the_bot_moved(port, gid, keys[1], BOT_MOVES)
            _call_log_written(gid, bot.pk)
            counters = call(port, "GET", "/healthz/")[1]["counters"]
    finally:
        stop()
    seat = Seat.objects.get(game_id=gid, bot=bot)
    assert (seat.strikes, seat.forfeited) == (0, False)
    bot_moves = MoveRecord.objects.filter(game_id=gid, seat=seat.index)
    assert bot_moves.count() >= BOT_MOVES
    assert not bot_moves.exclude(source=MoveSource.PLAYER).exists()
    assert BotCall.objects.filter(bot=bot, game_id=gid, kind="turn", outcome="move").count() == (
        bot_moves.count())
    assert counters["bot_turn_publish_errors"] >= 1


def _call_log_written(gid: int, bot_id: int) -> None:
    """Wait (bounded: 10 s) until the server has logged the call of each of the bot's moves:
    it logs a call just after the move commits, and the test stopping the server at once
    under a busy CI once left the last one unwritten (6 calls for 7 moves)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        seat = Seat.objects.get(game_id=gid, bot_id=bot_id)
        moves = MoveRecord.objects.filter(game_id=gid, seat=seat.index).count()
        if BotCall.objects.filter(bot_id=bot_id, game_id=gid, kind="turn",
                                  outcome="move").count() >= moves:
            return
        time.sleep(0.05)


def _table_against_the_bot(port: int, keys: list[str], bot_id: int) -> int:
    """Alice's bot in seat 0, bob in seat 1, 5 s a turn (the reviewer's table), started."""
    status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
        "seats": 2, "join": False, "turn_seconds": 5, "options": {"single_hand": True}})
    assert status == 201, game
    gid = int(game["id"])
    joined = call(port, "POST", f"/api/games/{gid}/join/", key=keys[0], body={"bot": bot_id})
    assert joined[0] == 200, joined[1]
    assert call(port, "POST", f"/api/games/{gid}/join/", key=keys[1])[0] == 200
    started = call(port, "POST", f"/api/games/{gid}/start/", key=keys[0], timeout=15)
    assert started[0] == 200, started[1]
    return gid


def _play_until_the_bot_moved(port: int, gid: int, key: str, bot_moves: int) -> None:
    """Bob plays his first legal move whenever it is his turn, until the bot has made
    ``bot_moves`` moves or the game is over (the bot forfeited: the test's assertions say
    so). Bounded: 60 s."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if MoveRecord.objects.filter(game_id=gid, seat=0).count() >= bot_moves:
            return
        view = call(port, "GET", f"/api/games/{gid}/view/?wait=5&until=turn", key=key)[1]
        if view["status"] != "running":
            return
        state = view["view"]
        if state.get("awaiting") != view["seat"] or not state["legal_moves"]:
            continue
        status, body, _ = call(port, "POST", f"/api/games/{gid}/moves/", key=key,
                               body={"version": view["version"], "move": state["legal_moves"][0]})
        assert status in (201, 409), body  # 409: the clock moved the game on meanwhile
