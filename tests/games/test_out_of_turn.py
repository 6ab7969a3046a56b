"""Out-of-turn moves (Uno catch, late Uno call, jump-in) go through the same endpoint."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from games import services
from games.models import Game
from games.uno import Options
from games.uno.scenario import scenario

pytestmark = pytest.mark.django_db


def _rigged(alice: Any, bob: Any, charlie: Any, **options: Any) -> Game:
    """A running three-seat game whose state is a known scenario: alice (seat 0) to play,
    holding R1 and G7 on a red 3."""
    game = services.game_create(user=alice, options=options, seats=3)
    services.seat_join(game_id=game.pk, user=bob)
    services.seat_join(game_id=game.pk, user=charlie)
    services.game_start(game_id=game.pk, user=alice)
    state = scenario(
        Options(players=3, **options),
        hands=[["R1", "G7"], ["B1", "B2", "R4"], ["B3", "B4", "R3"]],
        top="R3",
        deck=["Y1", "Y2", "Y3", "Y4", "Y5", "Y6"],
    )
    game = Game.objects.get(pk=game.pk)
    game.state = state.to_json()
    game.awaiting = state.awaiting
    game.save()
    return game


def _post(client: APIClient, game: Game, move: dict[str, Any]) -> Any:
    version = Game.objects.get(pk=game.pk).version
    return client.post(f"/api/games/{game.pk}/moves/", {"version": version, "move": move},
                       format="json")


def _view(client: APIClient, game: Game) -> dict[str, Any]:
    return client.get(f"/api/games/{game.pk}/view/").json()["view"]


def test_a_seat_that_is_not_awaited_catches_a_missed_uno(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, charlie_api: APIClient
) -> None:
    game = _rigged(alice, bob, charlie)
    assert _post(alice_api, game, {"type": "play", "card": "R1"}).status_code == 201
    seen = _view(charlie_api, game)
    assert seen["uno_window"] == 0 and seen["awaiting"] == 1
    assert {"type": "catch", "target": 0} in seen["legal_moves"]
    caught = _post(charlie_api, game, {"type": "catch", "target": 0})
    assert caught.status_code == 201, caught.content
    assert caught.json()["played"]["seat"] == 2
    assert _view(charlie_api, game)["hand_counts"][0] == 3


def test_the_offender_closes_the_window_with_a_late_uno_call(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, charlie_api: APIClient
) -> None:
    game = _rigged(alice, bob, charlie)
    _post(alice_api, game, {"type": "play", "card": "R1"})
    assert _post(alice_api, game, {"type": "uno"}).status_code == 201
    late = _post(charlie_api, game, {"type": "catch", "target": 0})
    assert late.status_code == 422 and late.json()["code"] == "illegal_move"


def test_calling_uno_with_the_penultimate_card_leaves_nothing_to_catch(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, charlie_api: APIClient
) -> None:
    game = _rigged(alice, bob, charlie)
    assert _post(alice_api, game, {"type": "play", "card": "R1", "uno": True}).status_code == 201
    assert _view(charlie_api, game)["uno_window"] is None


def test_the_window_closes_with_the_next_action(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, bob_api: APIClient,
    charlie_api: APIClient,
) -> None:
    game = _rigged(alice, bob, charlie)
    _post(alice_api, game, {"type": "play", "card": "R1"})
    assert _post(bob_api, game, {"type": "draw"}).status_code == 201
    assert _view(charlie_api, game)["uno_window"] is None


def test_a_jump_in_is_played_out_of_turn_when_the_option_is_on(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, charlie_api: APIClient
) -> None:
    game = _rigged(alice, bob, charlie, jump_in=True)
    # Seat 2 holds the identical R3 on top: it may jump in although seat 0 is awaited.
    jumped = _post(charlie_api, game, {"type": "play", "card": "R3"})
    assert jumped.status_code == 201, jumped.content
    wrong = _post(alice_api, game, {"type": "play", "card": "G7"})
    assert wrong.status_code in (409, 422)
