"""The typed schema describes the real JSON exactly: every view (of every seat, at every step),
every move's answer, the events, the move log, the game and the replay of games played under
every option set validate against the served schema, closed (an object takes no key its schema
does not name). So a seat's view shows no other hand, deck or seed, and the drawn card only to
the drawer; only the replay, once the game is over, shows them.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import jsonschema
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games import services
from games.models import EventKind
from tests.arena.test_schema_examples import openapi, operation, validator
from tests.games.conftest import FakeClock, choose, client_for, create_game

pytestmark = pytest.mark.django_db

JSON = "application/json"

OPTION_SETS: list[dict[str, Any]] = [
    {"single_hand": True},
    {"single_hand": True, "players": 3, "stacking": True},
    {"single_hand": True, "players": 4, "seven_o": True},
    {"single_hand": True, "players": 3, "jump_in": True},
    {"single_hand": True, "draw_until_playable": True},
    {"single_hand": True, "players": 3, "deck_2018": True},
    {"single_hand": True, "start_2022": True},
    {"single_hand": True, "players": 4, "stacking": True, "seven_o": True, "jump_in": True,
     "draw_until_playable": True, "deck_2018": True, "start_2022": True},
    {"target_score": 60},  # usually several hands: last_hand, more than one deal
]


@cache
def _validator(operation_id: str, status: int) -> jsonschema.Validator:
    declared = operation(operation_id)["responses"][str(status)]
    return validator(declared["content"][JSON]["schema"])


def check(operation_id: str, response: Any) -> Any:
    """The response's JSON, after validating it against what the operation declares."""
    body = response.json()
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _validator(operation_id, response.status_code).iter_errors(body)
    ]
    assert not errors, f"{operation_id} {response.status_code}: {errors[:5]}"
    return body


def _players(count: int) -> list[APIClient]:
    users = get_user_model().objects
    return [client_for(users.create_user(f"player-{i}", password="pw-long-enough-1"))
            for i in range(count)]


def _seat_view_is_the_seats_own(body: dict[str, Any]) -> None:
    view = body["view"]
    pending = view["pending"]
    if pending is not None and pending["type"] == "drawn":
        assert ("card" in pending) == (pending["seat"] == body["seat"]), pending
    assert len(view["hand"]) == view["hand_counts"][body["seat"]]


def _bot_move(rng: random.Random, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Mostly the greedy bot (short games); sometimes any legal move, so that challenges,
    missed Uno calls and catches happen too."""
    return rng.choice(legal) if rng.random() < 0.25 else choose(rng, legal)


def _play(clients: list[APIClient], game_id: int, rng: random.Random) -> None:
    url = f"/api/games/{game_id}/"
    awaiting: int | None = None
    for step in range(3000):
        # Every seat's view now and then, and at the end; else the awaited seat's only.
        every = awaiting is None or step % 4 == 0
        views = [
            check("games_view", client.get(f"{url}view/"))
            for seat, client in enumerate(clients) if every or seat == awaiting
        ]
        for body in views:
            _seat_view_is_the_seats_own(body)
        if views[0]["status"] != "running":
            assert every
            return
        # The awaited seat moves; now and then another seat's out-of-turn move goes first.
        movers = [v for v in views if v["view"]["legal_moves"]]
        body = next(v for v in views if v["seat"] == v["view"]["awaiting"])
        if every and rng.random() < 0.2:
            body = rng.choice(movers)
        move = _bot_move(rng, body["view"]["legal_moves"])
        response = clients[body["seat"]].post(
            f"{url}moves/", {"version": body["version"], "move": move}, format="json"
        )
        assert response.status_code == 201, response.content
        played = check("games_moves_create", response)
        _seat_view_is_the_seats_own(played)
        awaiting = played["view"]["awaiting"] if played["status"] == "running" else None
    raise AssertionError("the game did not end")


def _check_the_record(client: APIClient, game_id: int) -> dict[str, Any]:
    url = f"/api/games/{game_id}/"
    check("games_retrieve", client.get(url))
    check("games_moves_list", client.get(f"{url}moves/"))
    events = check("games_events", client.get(f"{url}events/?since=0"))
    while events["more"]:
        since = events["events"][-1]["version"]
        events = check("games_events", client.get(f"{url}events/?since={since}"))
    return check("games_replay", client.get(f"{url}replay/"))


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(sorted(o)))
def test_views_moves_events_and_replays_of_every_option_set_match_the_schema(
    options: dict[str, Any],
) -> None:
    seats = options.get("players", 2)
    clients = _players(seats)
    game = create_game(clients[0], seats=seats, options=options, turn_seconds=3600)
    for client in clients[1:]:
        check("games_join", client.post(f"/api/games/{game['id']}/join/"))
    check("games_start", clients[0].post(f"/api/games/{game['id']}/start/"))
    _play(clients, game["id"], random.Random(seats * 1000 + len(options)))
    replay = _check_the_record(clients[0], game["id"])
    assert replay["final"]["finished"] is True
    # One deal per hand (with a target score, usually more than one hand).
    assert len(replay["deals"]) == replay["final"]["hand_number"]
    assert replay["final"]["last_hand"] is not None


def test_strikes_forfeits_leaving_and_aborting_match_the_schema(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient, fake_clock: FakeClock
) -> None:
    # A seat that lets its clock run out is struck, then forfeited: the game ends.
    game = create_game(alice_api, seats=2, options={"single_hand": True}, turn_seconds=5,
                       max_strikes=1)
    bob_api.post(f"/api/games/{game['id']}/join/")
    alice_api.post(f"/api/games/{game['id']}/start/")
    fake_clock.advance(6)
    services.turn_clock_enforce(game_id=game["id"])
    events = check("games_events", alice_api.get(f"/api/games/{game['id']}/events/"))
    kinds = [event["kind"] for event in events["events"]]
    assert {"strike", "forfeited", "finished"} <= set(kinds), kinds
    _check_the_record(alice_api, game["id"])

    # A player leaves, and the staff abort the table before the start: no deal to replay.
    table = create_game(alice_api, seats=3, options={"single_hand": True})
    charlie_api.post(f"/api/games/{table['id']}/join/")
    check("games_leave", charlie_api.post(f"/api/games/{table['id']}/leave/"))
    services.game_abort(game_id=table["id"])
    replay = _check_the_record(alice_api, table["id"])
    assert replay["final"] is None and replay["status"] == "aborted"
    events = alice_api.get(f"/api/games/{table['id']}/events/").json()["events"]
    assert [e["kind"] for e in events] == ["joined", "joined", "left", "aborted"]


def test_the_schema_names_every_event_kind_phase_and_pending_decision() -> None:
    schemas = openapi()["components"]["schemas"]
    kinds = schemas["Event"]["discriminator"]["mapping"]
    assert set(kinds) == set(EventKind.values)
    assert set(schemas["Pending"]["discriminator"]["mapping"]) == {
        "drawn", "color", "challenge", "stack"
    }
    assert schemas["Phase"]["enum"] == ["play", "drawn", "color", "challenge", "stack", "over"]
    assert len(schemas["CardCode"]["enum"]) == 56
    # A legal move is the very model a move is sent as.
    assert "MoveRequest" not in schemas
    assert schemas["MoveInputRequest"]["properties"]["move"] == {
        "$ref": "#/components/schemas/Move"
    }
    assert schemas["Move"]["additionalProperties"] is False
