"""What the server refuses, the schema says: a client validating its requests against the schema
(as generated clients and fuzzers do) never sends a request the server answers 400, and never
refuses one the server would take."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from core.strict import MAX_PAGE
from games.schema import INT64_MAX
from tests.arena.test_schema_examples import openapi, operation
from tests.games.conftest import create_game

pytestmark = pytest.mark.django_db


def _parameter(operation_id: str, name: str) -> dict[str, Any]:
    return next(p for p in operation(operation_id)["parameters"] if p["name"] == name)


@pytest.mark.parametrize("operation_id", ["games_list", "games_moves_list"])
def test_page_has_the_maximum_the_server_reads(
    operation_id: str, alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    assert _parameter(operation_id, "page")["schema"]["maximum"] == MAX_PAGE
    url = "/api/games/" if operation_id == "games_list" else (
        f"/api/games/{running_game['id']}/moves/"
    )
    assert alice_api.get(url, {"page": MAX_PAGE}).status_code == 404  # past the end
    refused = alice_api.get(url, {"page": MAX_PAGE + 1})
    assert refused.status_code == 400 and "page" in refused.json()["fields"]


def test_since_has_the_64_bit_maximum_the_server_reads(
    alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    assert _parameter("games_events", "since")["schema"]["maximum"] == INT64_MAX
    url = f"/api/games/{running_game['id']}/events/"
    answer = alice_api.get(url, {"since": INT64_MAX})
    assert answer.status_code == 200 and answer.json()["events"] == []
    for too_big in (INT64_MAX + 1, 10**20):
        refused = alice_api.get(url, {"since": too_big})
        assert refused.status_code == 400 and "since" in refused.json()["fields"]


def test_the_idempotency_key_length_is_declared_and_held_to(
    alice_api: APIClient, bob_api: APIClient, running_game: dict[str, Any]
) -> None:
    schema = _parameter("games_moves_create", "Idempotency-Key")["schema"]
    assert (schema["minLength"], schema["maxLength"]) == (1, 255)
    url = f"/api/games/{running_game['id']}/moves/"
    api = [alice_api, bob_api][running_game["awaiting"]]
    view = api.get(f"/api/games/{running_game['id']}/view/").json()
    body = {"version": view["version"], "move": view["view"]["legal_moves"][-1]}
    refused = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 256)
    assert refused.status_code == 400
    assert api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 255).status_code == 201


def test_no_option_declares_a_default_the_server_refuses_with_seats(
    alice_api: APIClient,
) -> None:
    options = openapi()["components"]["schemas"]["OptionsRequest"]
    assert "default" not in options["properties"]["players"]
    # What a generated model sends: every option that declares a default, with it.
    defaults = {name: spec["default"] for name, spec in options["properties"].items()
                if "default" in spec}
    assert set(defaults) == set(options["properties"]) - {"players"}
    game = create_game(alice_api, seats=3, options=defaults)
    assert game["options"]["players"] == 3


def test_a_move_takes_no_key_the_schema_does_not_name() -> None:
    move = openapi()["components"]["schemas"]["Move"]
    assert move["additionalProperties"] is False
    assert set(move["properties"]) == {"type", "card", "color", "target", "uno"}


def test_every_operation_refuses_a_query_parameter_its_schema_does_not_name(
    alice_api: APIClient,
) -> None:
    """One list for the whole API: the schema's. ``?foo=1`` is a 400 naming ``foo`` on every
    GET of the schema (ids that do not exist are fine: the query is checked first)."""
    checked = 0
    for path, operations in openapi()["paths"].items():
        if "get" not in operations or path == "/api/stream/":  # the stream: tests/games
            continue
        url = path.replace("{id}", "1").replace("{bot_id}", "1")
        response = alice_api.get(url, {"foo": "1"})
        assert response.status_code == 400, (path, response.content)
        assert response.json()["fields"] == {"foo": ["Unknown query parameter."]}, path
        checked += 1
    assert checked >= 15


def test_the_query_parameters_the_schema_names_are_taken(alice_api: APIClient) -> None:
    assert alice_api.get("/api/leaderboard/", {"page": "1", "page_size": "5"}).status_code == 200
    assert alice_api.get("/api/tournaments/", {"page_size": "5", "mine": "true"}
                         ).status_code == 200
    assert alice_api.get("/api/games/", {"page_size": "5", "status": "open"}).status_code == 200


def test_a_query_parameter_given_twice_is_a_400_naming_it(
    alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    """``?since=0&since=1`` was taken as ``since=1`` (Django keeps the last value): none of the
    API's query parameters is a list, so a second value is refused, not guessed at."""
    events = f"/api/games/{running_game['id']}/events/"
    refused = alice_api.get(f"{events}?since=0&since=1")
    assert refused.status_code == 400
    assert refused.json()["fields"] == {"since": ["Given more than once; give it once."]}
    assert alice_api.get(f"{events}?since=0").status_code == 200
    assert alice_api.get("/api/games/?page=1&page=2").status_code == 400


def test_every_operation_declares_the_400_413_and_415_it_can_answer(
    alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    """An unknown query parameter is a 400 everywhere, also where the operation takes no
    parameter; a body that is not JSON is a 415, and one too large a 413, wherever a body is
    read: every POST, PUT and PATCH, also those that declare none (start, cancel, verify)."""
    schema = openapi()
    for path, item in schema["paths"].items():
        for method, op in item.items():
            assert "400" in op["responses"], (method, path)
            if "requestBody" in op or method in ("post", "put", "patch"):
                assert {"413", "415"} <= set(op["responses"]), (method, path)
    assert not [p for p in operation("games_retrieve").get("parameters", [])
                if p["in"] == "query"]
    refused = alice_api.get(f"/api/games/{running_game['id']}/", {"x": "1"})
    assert refused.status_code == 400 and "x" in refused.json()["fields"]
    plain = alice_api.post("/api/games/", "seats=2", content_type="text/plain")
    assert plain.status_code == 415 and plain.json()["code"] == "unsupported_media_type"
    start = alice_api.post(f"/api/games/{running_game['id']}/start/", "go",
                           content_type="text/plain")
    assert start.status_code == 415 and "requestBody" not in operation("games_start")


@pytest.mark.parametrize(("operation_id", "name"), [
    ("leaderboard", "rule_set"), ("leaderboard", "owner"), ("leaderboard", "search"),
    ("bots_ratings", "rule_set"),
])
def test_a_text_parameter_the_server_refuses_blank_declares_a_minimum_length(
    operation_id: str, name: str, alice: Any, alice_api: APIClient
) -> None:
    assert _parameter(operation_id, name)["schema"]["minLength"] == 1
    from tests.bots.helpers import register

    bot, _ = register(alice, "counted", "http://127.0.0.1:9/")
    url = "/api/leaderboard/" if operation_id == "leaderboard" else f"/api/bots/{bot.pk}/ratings/"
    refused = alice_api.get(url, {name: ""})
    assert refused.status_code == 400 and name in refused.json()["fields"]
