"""Hundreds of waiting requests hold no thread: a server process keeps 300 ``events?wait=``
open from 30 users while other clients play whole games on another server process, answers
its other requests meanwhile, and wakes every waiter with the move it waited for (PostgreSQL
NOTIFY from the other process)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import aiohttp
import pytest
from django.contrib.auth import get_user_model

from arena.accounts.services import token_create
from tests.live_server import call, live_server, play_one_move, start_a_game

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WAITERS_PER_USER = 10
USERS = 30  # 300 waits: 10 a user, under the per-user cap
GAMES = 4  # the waiters' games: each gets one move a round
PLAYING_PAIRS = 2  # others playing whole games meanwhile
ROUNDS = 2


def keys_for(prefix: str, count: int) -> list[str]:
    users = [get_user_model().objects.create_user(f"{prefix}{i}") for i in range(count)]
    return [token_create(user=user)[1] for user in users]


def open_waits(port: int) -> int:
    return int(call(port, "GET", "/healthz/")[1]["counters"]["long_polls_open"])


async def wait_for_events(
    session: aiohttp.ClientSession, port: int, key: str, game_id: int, since: int
) -> tuple[int, Any]:
    url = f"http://127.0.0.1:{port}/api/games/{game_id}/events/?since={since}&wait=25"
    async with session.get(url, headers={"Authorization": f"Token {key}"}) as response:
        return response.status, await response.json()


def play_whole_games(port: int, keys: list[str], stop: threading.Event, done: list[int]) -> None:
    """Others: play games to the end, one after another."""
    while not stop.is_set():
        game = start_a_game(port, keys[0], keys[1])
        status = game["status"]
        while status == "running" and not stop.is_set():
            code, body = play_one_move(port, game["id"], keys)
            assert code in (201, 409), body  # 409: the clock or the other seat got there first
            status = body.get("status", "running")
        if status != "running":
            done.append(game["id"])


async def a_round(
    waiting_port: int, playing_port: int, waiter_keys: list[str], player_keys: list[str],
    games: list[dict[str, Any]],
) -> None:
    versions = {game["id"]: game["version"] for game in games}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=60)
    ) as session:
        waits = [
            (game_id := games[(user * WAITERS_PER_USER + i) % GAMES]["id"],
             asyncio.ensure_future(wait_for_events(
                 session, waiting_port, key, game_id, versions[game_id])))
            for user, key in enumerate(waiter_keys)
            for i in range(WAITERS_PER_USER)
        ]
        # Every wait is held before anything moves (bounded: 60 s), and the process holding
        # them answers other requests all along.
        for _ in range(600):
            if await asyncio.to_thread(open_waits, waiting_port) == len(waits):
                break
            await asyncio.sleep(0.1)
        assert await asyncio.to_thread(open_waits, waiting_port) == len(waits)
        assert not any(task.done() for _, task in waits)

        played = {}
        for game in games:
            status, body = await asyncio.to_thread(
                play_one_move, playing_port, game["id"], player_keys[game["pair"]]
            )
            assert status == 201, body
            played[game["id"]] = body["version"]
        for game_id, task in waits:
            status, page = await task
            assert status == 200, page
            assert page["version"] >= played[game_id]
            assert page["events"][0]["version"] == versions[game_id] + 1
            assert any(event["version"] == played[game_id] for event in page["events"])
        for game in games:
            game["version"] = played[game["id"]]


def test_hundreds_of_waits_hold_no_thread_and_all_wake_with_the_move_while_others_play() -> None:
    waiter_keys = keys_for("waiter", USERS)
    player_keys = [keys_for(f"player{pair}-", 2) for pair in range(GAMES)]
    others = [keys_for(f"other{pair}-", 2) for pair in range(PLAYING_PAIRS)]
    # Waits on one server process, moves on another: woken by PostgreSQL's NOTIFY. Each
    # has 4 threads for the request/response endpoints, far fewer than the waits.
    with live_server(threads=4) as waiting_port, live_server(threads=4) as playing_port:
        games = []
        for pair, keys in enumerate(player_keys):
            game = start_a_game(playing_port, keys[0], keys[1])
            games.append({"id": game["id"], "version": game["version"], "pair": pair})
        stop, finished = threading.Event(), []
        playing = [
            threading.Thread(target=play_whole_games, args=(playing_port, keys, stop, finished),
                             daemon=True)
            for keys in others
        ]
        for thread in playing:
            thread.start()
        try:
            for _ in range(ROUNDS):
                asyncio.run(a_round(waiting_port, playing_port, waiter_keys, player_keys, games))
        finally:
            # The others go on until they have finished a game each (bounded: 120 s).
            deadline = time.monotonic() + 120
            while len(finished) < PLAYING_PAIRS and time.monotonic() < deadline:
                time.sleep(0.2)
            stop.set()
            for thread in playing:
                thread.join(60)
        assert len(finished) >= PLAYING_PAIRS, "the other players stalled"
        assert open_waits(waiting_port) == 0


def test_a_client_that_goes_away_mid_wait_frees_its_slot_at_once() -> None:
    alice, bob = keys_for("leaver", 2)
    with live_server({"WAIT_MAX_PER_PROCESS": "1"}) as port:
        game = start_a_game(port, alice, bob)
        path = f"/api/games/{game['id']}/events/?since={game['version']}&wait=25"
        leaver = socket.create_connection(("127.0.0.1", port))
        leaver.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {alice}\r\n\r\n"
            .encode()
        )
        for _ in range(300):  # bounded: 30 s
            if open_waits(port) == 1:
                break
            time.sleep(0.1)
        assert open_waits(port) == 1
        assert call(port, "GET", path, key=bob)[0] == 429  # the process's only slot is taken
        leaver.close()  # gone long before its 25 s
        for _ in range(300):
            if open_waits(port) == 0:
                break
            time.sleep(0.1)
        assert open_waits(port) == 0
        status, body = play_one_move(port, game["id"], [alice, bob])
        assert status == 201, body
        status, page, _ = call(port, "GET", path, key=bob)  # the slot is free again
        assert status == 200 and page["events"], page
