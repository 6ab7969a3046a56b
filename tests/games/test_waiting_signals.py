"""A waiting request sends Django's request signals once each, on the threads that do its
database work (``arena.serving.WaitingHandler.step``): ``request_started`` before its first
step, ``request_finished`` after the step that answers. Their receivers look after the
thread's database connection; the event loop has none. Driven in this process through the
ASGI application's waiting side, its steps on the pool's threads."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core import signals
from django.db import connections

from arena.accounts.services import token_create
from arena.serving import WaitingHandler
from games import listen, rows, waiting
from games.models import Game
from tests.games.conftest import move_for_the_awaited

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _pool_closed_after() -> Iterator[None]:
    """The wait pool's threads keep their database connections: closed with the pool, before
    the test database goes."""
    yield
    waiting._threads().shutdown()


@pytest.fixture
def sent() -> Iterator[list[tuple[str, str]]]:
    """(signal, thread name) for each request signal sent while the test runs."""
    seen: list[tuple[str, str]] = []

    def started(**kwargs: Any) -> None:
        seen.append(("started", threading.current_thread().name))

    def finished(**kwargs: Any) -> None:
        seen.append(("finished", threading.current_thread().name))

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    yield seen
    signals.request_started.disconnect(started)
    signals.request_finished.disconnect(finished)


def ask(path: str, key: str, *, then: Any = None) -> tuple[int, dict[str, Any]]:
    """GET ``path`` through the waiting side of the ASGI application; ``then`` runs (on
    another thread) once the request has been sent."""

    async def exchange() -> tuple[int, dict[str, Any]]:
        path_only, _, query = path.partition("?")
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": path_only, "raw_path": path.encode(),
            "query_string": query.encode(), "root_path": "",
            "headers": [(b"host", b"testserver"), (b"authorization", f"Token {key}".encode())],
            "client": ("127.0.0.1", 5000), "server": ("testserver", 80),
        }
        app = ApplicationCommunicator(WaitingHandler(), scope)
        await app.send_input({"type": "http.request", "body": b"", "more_body": False})
        if then is not None:
            await _on_a_thread(then)
        start = await app.receive_output(10)
        body = b""
        while True:
            message = await app.receive_output(10)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await app.wait(1)
        await (await listen.hub()).stop()  # its LISTEN connection ends with the test
        return start["status"], json.loads(body)

    return async_to_sync(exchange)()


async def _on_a_thread(function: Any) -> None:
    def run() -> None:
        try:
            function()
        finally:
            connections.close_all()  # this thread's, before the test database goes

    await asyncio.sleep(0.3)  # the request is suspended, waiting for the change
    await asyncio.get_running_loop().run_in_executor(None, run)


def keys(game_id: int) -> dict[int, str]:
    return {seat.index: token_create(user=seat.user)[1]
            for seat in Game.objects.get(pk=game_id).seats.all()}


def _wait_for_the_turn(game_id: int, clients: dict[int, Any]) -> tuple[int, int, dict[str, Any]]:
    """The seat not awaited waits (``view?wait=&until=turn``) while the others play until its
    turn (a draw keeps the turn: play on): the waiter, and its answer's status and body."""
    awaited = Game.objects.get(pk=game_id).awaiting
    assert awaited is not None
    waiter = 1 - awaited

    def until_the_waiters_turn() -> None:
        while Game.objects.get(pk=game_id).awaiting != waiter:
            move_for_the_awaited(game_id, clients)

    status, body = ask(
        f"/api/games/{game_id}/view/?wait=5&until=turn", keys(game_id)[waiter],
        then=until_the_waiters_turn,
    )
    return waiter, status, body


def test_a_wait_answered_at_once_sends_each_signal_once_on_its_step_thread(
    running_game: dict[str, Any], sent: list[tuple[str, str]]
) -> None:
    game_id = running_game["id"]
    awaited = Game.objects.get(pk=game_id).awaiting
    assert awaited is not None

    status, body = ask(f"/api/games/{game_id}/view/?wait=5&until=turn", keys(game_id)[awaited])

    assert status == 200, body
    assert body["view"]["awaiting"] == awaited
    assert [name for name, _ in sent] == ["started", "finished"]
    assert all(thread.startswith("uno-wait") for _, thread in sent), sent


def test_a_resumed_wait_sends_each_signal_once_on_its_step_threads(
    running_game: dict[str, Any], alice_api: Any, bob_api: Any, sent: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rows, "game_heard", lambda *args: None)  # resumed on a thread
    waiter, status, body = _wait_for_the_turn(running_game["id"], {0: alice_api, 1: bob_api})

    assert status == 200, body
    assert body["view"]["awaiting"] == waiter  # woken by the move, with the new state
    on_the_waits_threads = [name for name, thread in sent if thread.startswith("uno-wait")]
    assert on_the_waits_threads == ["started", "finished"], sent


def test_a_wait_answered_on_the_loop_sends_request_finished_once_on_the_loop(
    running_game: dict[str, Any], alice_api: Any, bob_api: Any, sent: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The answer made on the event loop (``WaitingApiView.answered``): no step on a thread
    finishes the request, so the handler sends ``request_finished`` there, as a stream's end
    does (its receivers find no database connection of the request's on the loop)."""
    loop_threads: list[str] = []
    usual = waiting.WaitingApiView.answered

    def answered(self: Any, suspended: Any, change: Any) -> Any:
        response = usual(self, suspended, change)
        if response is not None:
            loop_threads.append(threading.current_thread().name)
        return response

    monkeypatch.setattr(waiting.WaitingApiView, "answered", answered)
    _, status, body = _wait_for_the_turn(running_game["id"], {0: alice_api, 1: bob_api})

    assert status == 200, body
    assert len(loop_threads) == 1, "the kept row of the move let the loop answer"
    mine = [(name, thread) for name, thread in sent
            if thread.startswith("uno-wait") or thread == loop_threads[0]]
    assert mine == [("started", mine[0][1]), ("finished", loop_threads[0])], sent
    assert mine[0][1].startswith("uno-wait")
