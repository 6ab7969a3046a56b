"""Moves on one game are serialised: racing clients can never both apply a move. Needs
PostgreSQL (real row locks and concurrent connections); skipped on the embedded SQLite."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import services
from games import uno as engine
from games.engine_state import load_state
from games.errors import IdempotencyKeyReused
from games.idempotency import idempotent_call
from games.models import Game, MoveRecord
from tests.games.conftest import client_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RACERS = 12


def _race(clients: list[APIClient], url: str, payload: dict[str, Any],
          headers: dict[str, str]) -> list[Any]:
    barrier = threading.Barrier(len(clients))
    results: list[Any] = [None] * len(clients)

    def post(i: int) -> None:
        try:
            barrier.wait()
            results[i] = clients[i].post(url, payload, format="json", headers=headers)
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _started(alice: Any, bob: Any) -> Game:
    game = services.game_create(user=alice, options={"single_hand": True}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    return services.game_start(game_id=game.pk, user=alice)


def test_many_concurrent_posts_of_the_same_move_apply_it_exactly_once(
    alice: Any, bob: Any
) -> None:
    game = _started(alice, bob)
    for round_ in range(3):
        game.refresh_from_db()
        seat = game.awaiting
        player = [alice, bob][seat]
        clients = [client_for(player) for _ in range(RACERS)]
        view = clients[0].get(f"/api/games/{game.pk}/view/").json()
        payload = {"version": view["version"], "move": view["view"]["legal_moves"][-1]}
        results = _race(clients, f"/api/games/{game.pk}/moves/", payload, {})
        codes = sorted(r.status_code for r in results)
        assert codes == [201] + [409] * (RACERS - 1), (round_, codes)
        assert {r.json()["code"] for r in results if r.status_code == 409} == {"stale_version"}
        numbers = list(MoveRecord.objects.filter(game=game).values_list("number", flat=True))
        assert numbers == list(range(1, round_ + 2))
        game.refresh_from_db()
        assert game.move_count == round_ + 1


def test_racing_retries_with_one_idempotency_key_all_get_the_first_response(
    alice: Any, bob: Any
) -> None:
    game = _started(alice, bob)
    player = [alice, bob][game.awaiting]
    clients = [client_for(player) for _ in range(RACERS)]
    view = clients[0].get(f"/api/games/{game.pk}/view/").json()
    payload = {"version": view["version"], "move": view["view"]["legal_moves"][-1]}
    results = _race(clients, f"/api/games/{game.pk}/moves/", payload,
                    {"Idempotency-Key": "same-key"})
    assert {r.status_code for r in results} == {201}
    # The same JSON (PostgreSQL's jsonb may store the keys in another order).
    assert len({json.dumps(r.json(), sort_keys=True) for r in results}) == 1
    assert MoveRecord.objects.filter(game=game).count() == 1


def test_one_idempotency_key_sent_at_once_for_two_games_plays_one_move(
    alice: Any, bob: Any
) -> None:
    """Each request locks only its own game, so both get past the key lookup; the key's
    unique constraint then refuses the late one, which is rolled back whole, its move too."""
    first, second = _started(alice, bob), _started(alice, bob)
    inside = threading.Event()
    release = threading.Event()
    outcome: dict[str, Any] = {}

    def play(game: Game) -> tuple[int, Any]:
        game.refresh_from_db()
        # A move that is legal whatever the deal (a draw is not when a Wild opened the pile).
        move = engine.default_move(load_state(game), game.awaiting)
        played = services.move_play(game_id=game.pk, seat=game.awaiting, move=move,
                                    expected_version=game.version)
        return 201, {"version": played.game.version}

    def slow() -> None:
        def produce() -> tuple[int, Any]:
            answer = play(first)
            inside.set()
            release.wait(10)  # meanwhile the other game stores the same key
            return answer

        try:
            outcome["slow"] = idempotent_call(user=alice, key="k1", fingerprint="first",
                                              game_id=first.pk, produce=produce)
        except IdempotencyKeyReused as exc:
            outcome["slow"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=slow)
    thread.start()
    assert inside.wait(10)
    fast = idempotent_call(user=alice, key="k1", fingerprint="second", game_id=second.pk,
                           produce=lambda: play(second))
    release.set()
    thread.join(10)

    assert fast[0] == 201 and fast[2] is False
    assert isinstance(outcome["slow"], IdempotencyKeyReused)
    assert MoveRecord.objects.filter(game=first).count() == 0
    assert MoveRecord.objects.filter(game=second).count() == 1
