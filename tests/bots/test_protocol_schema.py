"""Protocol 1 in the OpenAPI schema (``x-webhooks``): each body's example sits beside its own
schema (a turn on the request, the bot's answer on the 200), is valid against it, and is a turn
the server really sends: the seat asked is the view's seat and the awaited one, and the
top-level ``legal_moves`` are the view's."""

from __future__ import annotations

from typing import Any

from tests.arena.test_schema_examples import openapi, validator

JSON = "application/json"


def _turn_webhook() -> dict[str, Any]:
    return openapi()["x-webhooks"]["bot_turn"]["post"]  # type: ignore[no-any-return]


def test_it_shows_the_turn_example_on_the_request_and_an_answer_on_the_200() -> None:
    webhook = _turn_webhook()
    request = webhook["requestBody"]["content"][JSON]
    answer = webhook["responses"]["200"]["content"][JSON]
    turns = [example["value"] for example in request["examples"].values()]
    answers = [example["value"] for example in answer["examples"].values()]
    assert turns and answers
    assert all(turn["type"] == "turn" for turn in turns)
    assert all(set(value) == {"move"} for value in answers)
    for value in turns:
        assert not list(validator(request["schema"]).iter_errors(value))
    for value in answers:
        assert not list(validator(answer["schema"]).iter_errors(value))
        assert value["move"] in turns[0]["legal_moves"]


def test_its_turn_example_is_consistent_as_the_server_builds_it() -> None:
    request = _turn_webhook()["requestBody"]["content"][JSON]
    (turn,) = (example["value"] for example in request["examples"].values())
    view = turn["view"]
    assert turn["seat"] == view["seat"] == view["awaiting"]
    assert turn["legal_moves"] == view["legal_moves"] and turn["options"] == view["options"]
    assert turn["budget_ms"] > 0 and not {"seed", "deck", "hands"} & set(view)


def test_it_types_the_view_and_the_moves_as_the_rest_api_does() -> None:
    properties = openapi()["components"]["schemas"]["BotTurn"]["properties"]
    assert properties["view"]["allOf"] == [{"$ref": "#/components/schemas/SeatView"}]
    assert properties["legal_moves"]["items"] == {"$ref": "#/components/schemas/Move"}
