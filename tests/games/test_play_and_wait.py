"""Play-and-wait: ``POST moves/?wait=`` answers when the game changes again after the move,
so a bot needs one request per move."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import services
from games.models import Game
from tests.games.conftest import rigged_game

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _both_servings(serving: str) -> None:
    """Every test here runs against both ways of serving a wait (see ``serving``)."""


def _post(client: APIClient, game_id: int, version: int, move: dict[str, Any], wait: float) -> Any:
    return client.post(
        f"/api/games/{game_id}/moves/?wait={wait}", {"version": version, "move": move},
        format="json",
    )


def test_it_answers_when_the_opponent_replies(
    alice: Any, bob: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7", "B2"], ["R5", "B4", "Y9"]], ["Y1", "Y2", "Y3"])
    answer: dict[str, Any] = {}

    def alice_plays_and_waits() -> None:
        try:
            answer["response"] = _post(alice_api, game.pk, game.version,
                                       {"type": "play", "card": "R1"}, wait=20)
        finally:
            connection.close()

    thread = threading.Thread(target=alice_plays_and_waits)
    thread.start()
    # Bob waits for alice's move the ordinary way, then replies.
    seen = bob_api.get(f"/api/games/{game.pk}/view/").json()
    while seen["version"] == game.version:
        etag = f'"{game.pk}-{game.version}-1"'
        polled = bob_api.get(f"/api/games/{game.pk}/view/?wait=20", HTTP_IF_NONE_MATCH=etag)
        seen = polled.json() if polled.status_code == 200 else seen
    reply = bob_api.post(f"/api/games/{game.pk}/moves/",
                         {"version": seen["version"], "move": {"type": "play", "card": "R5"}},
                         format="json")
    assert reply.status_code == 201
    thread.join(30)
    response = answer["response"]
    assert response.status_code == 201
    body = response.json()
    assert body["played"]["move"] == {"type": "play", "card": "R1"}
    assert body["version"] == reply.json()["version"]
    assert body["view"]["top"] == "R5"
    assert body["view"]["awaiting"] == 0
    assert response["ETag"] == f'"{game.pk}-{body["version"]}-0"'


def test_until_turn_it_answers_only_when_the_decision_is_the_movers_again(
    alice: Any, bob: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    # Bob cannot follow alice's R1: he draws a playable B1, then keeps it. Two changes, and
    # only the second gives alice the turn.
    game = rigged_game(alice, bob, [["R1", "G7", "B2"], ["B4", "Y9"]], ["B1", "Y2", "Y3"])
    answer: dict[str, Any] = {}

    def alice_plays_and_waits_for_her_turn() -> None:
        try:
            answer["response"] = alice_api.post(
                f"/api/games/{game.pk}/moves/?wait=20&until=turn",
                {"version": game.version, "move": {"type": "play", "card": "R1"}}, format="json",
            )
        finally:
            connection.close()

    thread = threading.Thread(target=alice_plays_and_waits_for_her_turn)
    thread.start()
    seen = bob_api.get(f"/api/games/{game.pk}/view/?wait=20&until=turn").json()
    assert seen["view"]["awaiting"] == 1
    drew = bob_api.post(f"/api/games/{game.pk}/moves/",
                        {"version": seen["version"], "move": {"type": "draw"}}, format="json")
    assert drew.status_code == 201 and drew.json()["view"]["awaiting"] == 1
    kept = bob_api.post(f"/api/games/{game.pk}/moves/",
                        {"version": drew.json()["version"], "move": {"type": "keep"}},
                        format="json")
    assert kept.status_code == 201
    thread.join(30)
    body = answer["response"].json()
    assert body["played"]["move"] == {"type": "play", "card": "R1"}
    assert body["version"] == kept.json()["version"]
    assert body["view"]["awaiting"] == 0


def test_a_view_wait_until_turn_answers_at_once_when_it_is_already_your_turn(
    alice: Any, bob: Any, alice_api: APIClient
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7"], ["R5", "B4"]], ["Y1", "Y2", "Y3"])
    response = alice_api.get(f"/api/games/{game.pk}/view/?wait=20&until=turn")
    assert response.status_code == 200
    assert response.json()["view"]["awaiting"] == 0


def test_a_view_wait_until_turn_holds_while_another_seat_decides(
    alice: Any, bob: Any, bob_api: APIClient, fake_clock: Any
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7"], ["R5", "B4"]], ["Y1", "Y2", "Y3"])
    before = fake_clock.mono
    response = bob_api.get(f"/api/games/{game.pk}/view/?wait=3&until=turn")
    assert response.status_code == 200
    assert response.json()["view"]["awaiting"] == 0
    assert fake_clock.mono - before >= 3


def test_a_view_wait_until_turn_holds_through_the_wait_for_the_start(
    alice: Any, bob: Any, bob_api: APIClient, fake_clock: Any
) -> None:
    game = services.game_create(user=alice, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    before = fake_clock.mono
    response = bob_api.get(f"/api/games/{game.pk}/view/?wait=3&until=turn")
    assert response.status_code == 200 and response.json()["status"] == "open"
    assert fake_clock.mono - before >= 3


def test_a_view_wait_on_a_game_that_is_over_answers_at_once(
    alice: Any, bob: Any, bob_api: APIClient, fake_clock: Any
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7"], ["R5", "B4"]], ["Y1", "Y2", "Y3"])
    over = services.game_abort(game_id=game.pk)
    before = fake_clock.mono
    for query in ("wait=20", "wait=20&until=turn"):
        response = bob_api.get(f"/api/games/{game.pk}/view/?{query}",
                               HTTP_IF_NONE_MATCH=f'"{game.pk}-{over.version}-1"')
        assert response.status_code == 304, query
    assert fake_clock.mono == before


def test_it_answers_at_once_when_the_next_decision_is_the_movers(
    alice: Any, bob: Any, alice_api: APIClient
) -> None:
    # Alice draws a playable R7: she must now play it or keep it, so nothing is awaited.
    game = rigged_game(alice, bob, [["G1", "B2"], ["R5", "B4"]], ["R7", "Y1", "Y2"])
    response = _post(alice_api, game.pk, game.version, {"type": "draw"}, wait=20)
    assert response.status_code == 201
    assert response.json()["view"]["awaiting"] == 0
    assert response.json()["view"]["pending"]["type"] == "drawn"


def test_it_answers_after_the_wait_when_nothing_happens(
    alice: Any, bob: Any, alice_api: APIClient, fake_clock: Any
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7"], ["R5", "B4"]], ["Y1", "Y2", "Y3"])
    response = _post(alice_api, game.pk, game.version, {"type": "play", "card": "R1"}, wait=5)
    assert response.status_code == 201
    body = response.json()
    assert body["version"] == game.version + 1
    assert body["view"]["awaiting"] == 1


def test_a_replayed_idempotent_move_answers_without_waiting(
    alice: Any, bob: Any, alice_api: APIClient, fake_clock: Any
) -> None:
    game = rigged_game(alice, bob, [["R1", "G7"], ["R5", "B4"]], ["Y1", "Y2", "Y3"])
    body = {"version": game.version, "move": {"type": "play", "card": "R1"}}
    first = alice_api.post(f"/api/games/{game.pk}/moves/?wait=5", body, format="json",
                           HTTP_IDEMPOTENCY_KEY="k-1")
    again = alice_api.post(f"/api/games/{game.pk}/moves/?wait=5", body, format="json",
                           HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["played"] == first.json()["played"]
    assert Game.objects.get(pk=game.pk).move_count == 1


@pytest.mark.parametrize(
    "query", ["wait=-1", "wait=26", "wait=soon", "wait=", "until=later", "wiat=5",
              "wait=25.0000001", "wait=1&wait=26", "wait=1&until=turn&x=1"]
)
def test_a_malformed_wait_is_a_400_and_plays_nothing(
    running_game: dict[str, Any], alice_api: APIClient, query: str
) -> None:
    response = alice_api.post(
        f"/api/games/{running_game['id']}/moves/?{query}",
        {"version": running_game["version"], "move": {"type": "draw"}}, format="json",
    )
    assert response.status_code == 400
    assert Game.objects.get(pk=running_game["id"]).move_count == 0
