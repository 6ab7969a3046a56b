"""Protocol 1 in the OpenAPI schema (``x-webhooks``): each body's example sits beside its own
schema (a turn on the request, the bot's answer on the 200), is valid against it, and is a turn
the server really sends: the seat asked is the view's seat and the awaited one, and the
top-level ``legal_moves`` are the view's."""

from __future__ import annotations

from typing import Any

from bots.protocol import TURN_EXAMPLE
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


# --- the signature headers, the 401 and each body's type ----------------------------------------
SIGNED = ("webhook-id", "webhook-timestamp", "webhook-signature")


def _webhooks() -> dict[str, dict[str, Any]]:
    return {name: item["post"] for name, item in openapi()["x-webhooks"].items()}


def _headers(webhook: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in webhook.get("parameters", []) if p["in"] == "header"}


def _header_value(parameter: dict[str, Any], raw: str) -> Any:
    """A header's text as its schema types it (a header is text on the wire)."""
    return int(raw) if parameter["schema"]["type"] == "integer" else raw


def test_every_call_declares_the_three_signature_headers_as_required_with_their_formats(
) -> None:
    webhooks = _webhooks()
    assert set(webhooks) == {"bot_turn", "bot_start", "bot_end"}
    for name, webhook in webhooks.items():
        headers = _headers(webhook)
        assert set(headers) == set(SIGNED), name
        assert all(header["required"] for header in headers.values()), name
        assert headers["webhook-id"]["schema"]["pattern"]
        assert headers["webhook-timestamp"]["schema"] == {
            "type": "integer", "format": "int64", "minimum": 0}
        assert headers["webhook-signature"]["schema"]["pattern"]
        for header in headers.values():  # each example is one its own schema accepts
            assert not list(validator(header["schema"]).iter_errors(header["example"])), header


def test_the_headers_of_a_real_call_match_the_declared_formats_also_during_a_rotation(
    transport: Any,
) -> None:
    from bots import signing
    from tests.bots.fault_server import FaultServer

    headers = _headers(_webhooks()["bot_turn"])
    one, two = signing.new_secret(), signing.new_secret()
    with FaultServer(mode="ok") as bot:
        for secrets in ([one], [two, one]):
            assert transport.post_sync(bot.url, TURN_EXAMPLE, secrets=secrets, timeout=5).ok
    for request in bot.requests:
        for name, parameter in headers.items():
            value = _header_value(parameter, request.headers[name])
            assert not list(validator(parameter["schema"]).iter_errors(value)), (name, value)
    assert len(bot.requests[1].headers["webhook-signature"].split()) == 2


def test_every_call_declares_the_401_a_bad_signature_must_get() -> None:
    for name, webhook in _webhooks().items():
        refused = webhook["responses"]["401"]["description"]
        assert "missing" in refused and "5 minutes" in refused, name


def test_each_body_declares_its_own_type_alone() -> None:
    schemas = openapi()["components"]["schemas"]
    types = {name: schemas[name]["properties"]["type"]["enum"]
             for name in ("BotTurn", "BotStartNotice", "BotEndNotice")}
    assert types == {"BotTurn": ["turn"], "BotStartNotice": ["start"], "BotEndNotice": ["end"]}


def test_a_body_of_another_type_is_not_valid_as_a_turn() -> None:
    turn = _turn_webhook()["requestBody"]["content"][JSON]["schema"]
    assert not list(validator(turn).iter_errors(TURN_EXAMPLE))
    assert list(validator(turn).iter_errors({**TURN_EXAMPLE, "type": "start"}))
