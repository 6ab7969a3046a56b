"""A wait woken by a change whose game row this process has (kept from its own write, or
carried by the NOTIFY) is answered on the event loop (``WaitingApiView.answered``): no thread,
no query, no second pass through the middleware. That answer is the one the thread would have
given: same status, headers and body, the waiter's own view only."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import recent, rows, selectors, services, wait_api, waiting
from games.models import Game, Seat
from tests.games.conftest import client_for, move_for_the_awaited, rigged_game

pytestmark = pytest.mark.django_db(transaction=True)

HANDS = [["R1", "G7", "B2"], ["R5", "B4", "Y9"]]
DECK = ["Y1", "Y2", "Y3"]


@pytest.fixture(autouse=True)
def _served_without_a_thread(asgi_waits: None) -> None:
    """Waits served as the ASGI application serves them (``games.waiting.serve``)."""


@pytest.fixture
def on_the_loop(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The status of each answer made on the event loop, as it is made."""
    made: list[int] = []
    usual = waiting.WaitingApiView.answered

    def answered(self: Any, suspended: Any, change: Any) -> Any:
        response = usual(self, suspended, change)
        if response is not None:
            made.append(response.status_code)
        return response

    monkeypatch.setattr(waiting.WaitingApiView, "answered", answered)
    return made


@pytest.fixture
def suspended(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once a wait is suspended: its game is read and its changes subscribed, so a change
    made from now on is the one that wakes it."""
    event = threading.Event()
    usual = waiting.WaitingApiView.suspend

    def suspend(self: Any, **wait: Any) -> Any:
        event.set()
        return usual(self, **wait)

    monkeypatch.setattr(waiting.WaitingApiView, "suspend", suspend)
    return event


class _OnAThread:
    """A request sent from a thread of its own (a waiting client), its answer kept."""

    def __init__(self, ask: Callable[[], Any]) -> None:
        self.answer: Any = None

        def run() -> None:
            try:
                self.answer = ask()
            finally:
                connection.close()  # this thread's, before the test database goes

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def response(self) -> Any:
        self.thread.join(30)
        return self.answer


def _alice_plays_and_waits_for_bob(alice_api: APIClient, bob_api: APIClient, game: Game) -> Any:
    """Alice plays R1 and waits for her turn; bob replies with R5: alice's answer."""
    alice = _OnAThread(lambda: alice_api.post(
        f"/api/games/{game.pk}/moves/?wait=20&until=turn",
        {"version": game.version, "move": {"type": "play", "card": "R1"}}, format="json"))
    while bob_api.get(f"/api/games/{game.pk}/view/").json()["version"] == game.version:
        pass  # alice's move not yet committed
    replied = bob_api.post(f"/api/games/{game.pk}/moves/",
                           {"version": game.version + 1, "move": {"type": "play", "card": "R5"}},
                           format="json")
    assert replied.status_code == 201, replied.json()
    return alice.response()


def _same_but_the_game(response: Any, game: Game) -> tuple[int, dict[str, str], Any]:
    """Status, headers and body, with what differs between two games (ids, times) named."""
    headers = {name: value for name, value in response.headers.items()
               if name not in ("Date", "Content-Length")}
    headers["ETag"] = headers["ETag"].replace(f'"{game.pk}-', '"GAME-')
    body = response.json()
    assert body["game"] == game.pk
    body["game"] = "GAME"
    body["turn_deadline"] = "TIME" if body["turn_deadline"] else None
    body["played"]["created_at"] = "TIME"
    return response.status_code, headers, body


def test_a_play_and_wait_answered_on_the_loop_is_the_answer_a_thread_gives(
    alice: Any, bob: Any, alice_api: APIClient, bob_api: APIClient, on_the_loop: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    on_loop = rigged_game(alice, bob, HANDS, DECK)
    answered_on_loop = _alice_plays_and_waits_for_bob(alice_api, bob_api, on_loop)
    assert on_the_loop == [201]

    monkeypatch.setattr(rows, "game_heard", lambda *args: None)  # the row is not here
    on_thread = rigged_game(alice, bob, HANDS, DECK)
    answered_on_thread = _alice_plays_and_waits_for_bob(alice_api, bob_api, on_thread)
    assert on_the_loop == [201]  # this one went to a thread

    assert _same_but_the_game(answered_on_loop, on_loop) == _same_but_the_game(
        answered_on_thread, on_thread)
    assert answered_on_loop["Vary"] == "Accept"  # as DRF answers any request
    body = answered_on_loop.json()
    stored = Game.objects.get(pk=on_loop.pk)
    assert body["version"] == stored.version  # bob's reply, which woke alice
    assert body["view"] == selectors.game_view(game=stored, seat=0)  # alice's own view only


def test_a_view_wait_answered_on_the_loop_carries_the_new_view_and_its_etag(
    running_game: dict[str, Any], alice: Any, bob: Any, on_the_loop: list[int],
    suspended: threading.Event,
) -> None:
    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    awaited = Game.objects.get(pk=game_id).awaiting
    assert awaited is not None
    waiter = 1 - awaited
    waiting_client = _OnAThread(
        lambda: clients[waiter].get(f"/api/games/{game_id}/view/?wait=20&until=turn"))
    assert suspended.wait(10)
    while Game.objects.get(pk=game_id).awaiting != waiter:  # a draw keeps the turn: play on
        move_for_the_awaited(game_id, clients)

    response = waiting_client.response()
    stored = Game.objects.get(pk=game_id)
    assert response.status_code == 200 and on_the_loop == [200]
    assert response["ETag"] == selectors.view_etag(game=stored, seat=waiter)
    assert response.json()["view"] == selectors.game_view(game=stored, seat=waiter)


def _the_waiter(game_id: int) -> tuple[Game, int, Seat]:
    """The game as it stands, the seat not awaited, and that seat (with the game)."""
    before = Game.objects.get(pk=game_id)
    assert before.awaiting is not None
    waiter = 1 - before.awaiting
    return before, waiter, _seat_of(game_id, waiter)


def _seat_of(game_id: int, index: int) -> Seat:
    seat = Seat.objects.select_related("game").get(game_id=game_id, index=index)
    seat.game.forfeited_seats = 0
    return seat


@pytest.mark.parametrize("overdue", [False, True])
def test_an_overdue_turn_clock_or_a_wait_not_over_goes_to_a_thread(
    running_game: dict[str, Any], alice: Any, bob: Any, overdue: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    before = Game.objects.get(pk=game_id)
    mover = before.awaiting
    assert mover is not None
    seat = _seat_of(game_id, mover)
    version = move_for_the_awaited(game_id, clients)  # remembered here: the row is kept
    change = _change(game_id, version)
    known = [selectors.view_etag(game=before, seat=mover)]
    if overdue:
        monkeypatch.setattr("games.steps.turn_clock_overdue", lambda game: True)
        assert wait_api._seat_now(seat, change, known, until_turn=False) is None
    else:  # waiting for the mover's turn, which this change did not bring (a draw aside)
        after = Game.objects.get(pk=game_id)
        found = wait_api._seat_now(seat, change, known, until_turn=True)
        assert (found is None) == (after.awaiting != mover)


def _change(game_id: int, version: int) -> Any:
    from games.notify import Change

    stored = Game.objects.get(pk=game_id)
    return Change(version=version, awaiting=stored.awaiting, status=stored.status)


@pytest.mark.postgres
def test_a_change_made_by_another_process_is_answered_from_the_notifys_row(
    running_game: dict[str, Any], alice: Any, bob: Any,
) -> None:
    from tests.games.test_notified_row import heard_of, listening

    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    before, waiter, seat = _the_waiter(game_id)
    with listening() as other:
        version = move_for_the_awaited(game_id, clients)
        change = heard_of(other, game_id, version)
    recent.forget_all()  # as in a process that neither wrote nor read this row
    assert rows.recalled_game(game_id, version) is None and change.row is not None

    found = wait_api._seat_now(
        seat, change, [selectors.view_etag(game=before, seat=waiter)], until_turn=False)

    stored = Game.objects.get(pk=game_id)
    assert found is not None and found.game.version == stored.version == version
    assert selectors.game_view(game=found.game, seat=waiter) == selectors.game_view(
        game=stored, seat=waiter)


def test_without_the_row_it_is_a_thread_that_answers(
    running_game: dict[str, Any], alice: Any, bob: Any
) -> None:
    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    before, waiter, seat = _the_waiter(game_id)
    version = move_for_the_awaited(game_id, clients)
    recent.forget_all()
    change = _change(game_id, version)  # as a NOTIFY too long to carry the row says it

    assert wait_api._seat_now(
        seat, change, [selectors.view_etag(game=before, seat=waiter)], until_turn=False
    ) is None


def test_an_answer_that_fails_on_the_loop_is_made_on_a_thread_instead(
    alice: Any, bob: Any, alice_api: APIClient, bob_api: APIClient, on_the_loop: list[int],
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("a bug in the loop's answer")

    monkeypatch.setattr(wait_api, "_seat_now", broken)
    game = rigged_game(alice, bob, HANDS, DECK)

    answer = _alice_plays_and_waits_for_bob(alice_api, bob_api, game)

    assert answer.status_code == 201 and on_the_loop == []
    assert answer.json()["version"] == Game.objects.get(pk=game.pk).version  # bob's reply
    assert "on a thread instead" in caplog.text


def test_a_seat_left_at_an_open_table_is_never_answered_from_the_loop(
    alice: Any, bob: Any, charlie: Any, on_the_loop: list[int], suspended: threading.Event,
) -> None:
    """Bob waits for his turn at an open table, leaves, and charlie takes his seat before the
    start: bob is told he has no seat (403), as a thread reading the seat again tells him,
    never shown the seat's hand (found by a review: the loop answered 200 with charlie's)."""
    game = services.game_create(user=alice, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    bob_waits = _OnAThread(
        lambda: client_for(bob).get(f"/api/games/{game.pk}/view/?wait=20&until=turn"))
    assert suspended.wait(10)
    services.seat_leave(game_id=game.pk, user=bob)
    services.seat_join(game_id=game.pk, user=charlie, index=1)
    services.game_start(game_id=game.pk, user=alice)
    clients = {0: client_for(alice), 1: client_for(charlie)}
    while Game.objects.get(pk=game.pk).awaiting != 1:
        move_for_the_awaited(game.pk, clients)

    response = bob_waits.response()
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "not_a_player"
    assert on_the_loop == []


def test_the_browsable_apis_page_is_made_on_a_thread(
    running_game: dict[str, Any], alice: Any, bob: Any, on_the_loop: list[int],
    suspended: threading.Event,
) -> None:
    """Only JSON is answered on the loop: the HTML page renders a template that sets a CSRF
    cookie (found by a review: made on the loop, it lost the cookie its form needs)."""
    game_id = running_game["id"]
    clients = {0: client_for(alice), 1: client_for(bob)}
    _, waiter, _ = _the_waiter(game_id)
    waiting_client = _OnAThread(lambda: clients[waiter].get(
        f"/api/games/{game_id}/view/?wait=20&until=turn", HTTP_ACCEPT="text/html"))
    assert suspended.wait(10)
    while Game.objects.get(pk=game_id).awaiting != waiter:
        move_for_the_awaited(game_id, clients)

    response = waiting_client.response()
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert on_the_loop == []
