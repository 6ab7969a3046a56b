"""The OpenAPI schema's examples: a bot writer reading /api/docs/ sees a body for every request
and success response, each one valid against its schema, with the keys the endpoints really
send, and none showing hidden information (only a finished game's replay shows seed, hands
and deck). The response headers a client acts on are declared where they are sent."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime
from functools import cache
from typing import Any

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from tests.bots.helpers import close_default_transport
from tests.games.conftest import choose, client_for, play_to_the_end

HIDDEN = {"seed", "state", "rng", "deck"}
REPLAY = "games_replay"  # served only once the game is over: may show hidden information
JSON = "application/json"
# Headers a client acts on: wherever the API sends one, the schema must declare it.
HEADERS = ("ETag", "Idempotent-Replayed", "Retry-After", "Content-Disposition")


@cache
def openapi() -> dict[str, Any]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps(schema, default=str))  # plain JSON (no lazy strings)


def operations() -> Iterator[dict[str, Any]]:
    for item in openapi()["paths"].values():
        for method, operation in item.items():
            if method in {"get", "put", "post", "patch", "delete"}:
                yield operation


def operation(operation_id: str) -> dict[str, Any]:
    return next(op for op in operations() if op["operationId"] == operation_id)


def bodies(op: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(label, status or "request", media type object) of an operation's JSON bodies."""
    request = op.get("requestBody", {}).get("content", {}).get(JSON)
    if request is not None:
        yield f"{op['operationId']} request", "request", request
    for status, response in op["responses"].items():
        media = response.get("content", {}).get(JSON)
        if media is not None:
            yield f"{op['operationId']} {status}", status, media


def examples_of(op: dict[str, Any], status: str) -> list[Any]:
    media = op["responses"][status].get("content", {}).get(JSON, {})
    return [example["value"] for example in media.get("examples", {}).values()]


# --- OpenAPI 3.0 schema -> JSON Schema ---------------------------------------------------------
def json_schema(node: Any, *, closed: bool) -> Any:
    """``nullable`` becomes a null alternative. With ``closed``, objects that do not say
    otherwise take no other keys: a misspelt key in an example is an error."""
    if isinstance(node, list):
        return [json_schema(item, closed=closed) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in {"nullable", "example", "readOnly", "writeOnly"}:
            continue
        if key == "properties":
            out[key] = {name: json_schema(sub, closed=closed) for name, sub in value.items()}
        else:
            out[key] = json_schema(value, closed=closed)
    if closed and "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: Any) -> bool:
    """RFC 3339 with a time zone, as DRF writes it (jsonschema checks it only with an extra
    package installed)."""
    return not isinstance(value, str) or (
        "T" in value and datetime.fromisoformat(value).tzinfo is not None
    )


def validator(schema: dict[str, Any]) -> jsonschema.Validator:
    components = json_schema(openapi()["components"], closed=True)
    root = {**json_schema(schema, closed=True), "components": components}
    return jsonschema.Draft202012Validator(root, format_checker=FORMATS)


# --- the schema alone ----------------------------------------------------------------------------
def test_every_request_body_and_success_response_has_an_example() -> None:
    missing = [
        label
        for op in operations()
        for label, status, media in bodies(op)
        if (status == "request" or status.startswith("2")) and not media.get("examples")
    ]
    assert not missing, f"no example for: {missing}"


def test_every_example_is_valid_against_its_schema() -> None:
    problems: list[str] = []
    checked = 0
    for op in operations():
        for label, _, media in bodies(op):
            check = validator(media["schema"])
            for name, example in media.get("examples", {}).items():
                checked += 1
                problems += [
                    f"{label} {name} at {'/'.join(map(str, e.absolute_path))}: {e.message}"
                    for e in check.iter_errors(example["value"])
                ]
        for status, response in op["responses"].items():
            for header, spec in response.get("headers", {}).items():
                for name, example in spec.get("examples", {}).items():
                    checked += 1
                    problems += [
                        f"{op['operationId']} {status} {header} {name}: {e.message}"
                        for e in validator(spec["schema"]).iter_errors(example["value"])
                    ]
    assert checked > 40
    assert not problems, "\n".join(problems)


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _example_values(node: Any) -> Iterator[Any]:
    """Every example value under ``node`` (bodies, parameters, headers)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "examples" and isinstance(value, dict):
                yield from (example.get("value") for example in value.values())
            elif key == "example":
                yield value
            else:
                yield from _example_values(value)
    elif isinstance(node, list):
        for item in node:
            yield from _example_values(item)


def test_no_example_shows_hidden_information_but_the_replay() -> None:
    shown = [
        (op["operationId"], status, sorted(set(_keys(value)) & HIDDEN))
        for op in operations()
        for status, part in [("request", op.get("requestBody")), *op["responses"].items(),
                             ("parameters", op.get("parameters"))]
        for value in _example_values(part)
        if set(_keys(value)) & HIDDEN and (op["operationId"], status) != (REPLAY, "200")
    ]
    assert not shown
    # The replay's examples are the place for them (so this test checks something).
    assert any(set(_keys(value)) & HIDDEN for value in examples_of(operation(REPLAY), "200"))


def test_every_throttled_operation_declares_retry_after() -> None:
    for op in operations():
        if "429" in op["responses"]:
            assert "Retry-After" in op["responses"]["429"].get("headers", {}), op["operationId"]


# --- the examples against what the endpoints send ------------------------------------------------
# Keys whose content differs by kind of move, event or decision: compared by the schema only.
# A bot's verification and its counts by kind (maps keyed by what happened) likewise.
VARYING = {"move", "legal_moves", "data", "pending", "verification", "errors", "strikes"}


def same_keys(example: Any, real: Any, path: str = "$") -> list[str]:
    if isinstance(example, dict) and isinstance(real, dict):
        problems = []
        if set(example) != set(real):
            problems.append(
                f"{path}: example has {sorted(set(example) - set(real))} too many, "
                f"{sorted(set(real) - set(example))} too few"
            )
        for key in example.keys() & real.keys() - VARYING:
            problems += same_keys(example[key], real[key], f"{path}.{key}")
        return problems
    if isinstance(example, list) and isinstance(real, list):
        return same_keys(example[0], real[0], f"{path}[0]") if example and real else []
    if example is not None and real is not None and type(example) is not type(real):
        return [f"{path}: {type(example).__name__} in the example, {type(real).__name__} sent"]
    return []


@pytest.mark.django_db
def test_the_examples_have_the_keys_and_headers_the_endpoints_send(
    alice: Any, bob: Any, fresh_cache: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    rates = {"signup": "100/hour", "token": "1/hour", "move": "100000/minute",
             "replay": "100/minute", "verify": "100/hour"}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", rates)
    alice_api, bob_api = client_for(alice), client_for(bob)
    seen: list[tuple[str, Any]] = []

    def call(operation_id: str, client: APIClient, method: str, url: str, **kwargs: Any) -> Any:
        response = getattr(client, method)(url, format="json", **kwargs)
        seen.append((operation_id, response))
        return response

    call("accounts_create", APIClient(), "post", "/api/accounts/",
         data={"username": "my-bot", "password": "a long passphrase 1"})
    call("tokens_list", alice_api, "get", "/api/tokens/")
    call("tokens_create", alice_api, "post", "/api/tokens/", data={"expires_in": 86400})
    throttled = call("tokens_create", alice_api, "post", "/api/tokens/", data={})
    assert throttled.status_code == 429

    game = call("games_create", alice_api, "post", "/api/games/",
                data={"seats": 2, "options": {"single_hand": True}, "turn_seconds": 30}).json()
    url = f"/api/games/{game['id']}/"
    call("games_list", bob_api, "get", "/api/games/?open_seats=true")
    call("games_join", bob_api, "post", f"{url}join/", data={"seat": 1})
    call("games_leave", bob_api, "post", f"{url}leave/")
    call("games_join", bob_api, "post", f"{url}join/")
    call("games_start", alice_api, "post", f"{url}start/")
    call("games_retrieve", alice_api, "get", url)
    view = call("games_view", alice_api, "get", f"{url}view/")
    call("games_view", alice_api, "get", f"{url}view/", HTTP_IF_NONE_MATCH=view["ETag"])

    clients = [alice_api, bob_api]
    awaiting = view.json()["view"]["awaiting"]
    mine = clients[awaiting].get(f"{url}view/").json()
    legal = mine["view"]["legal_moves"]
    move = {"version": mine["version"], "move": choose(random.Random(0), legal)}
    for _ in range(2):  # the second answer is the first one, replayed
        call("games_moves_create", clients[awaiting], "post", f"{url}moves/", data=move,
             HTTP_IDEMPOTENCY_KEY="examples-1")
    assert seen[-1][1]["Idempotent-Replayed"] == "true"
    play_to_the_end(clients, game["id"])

    call("games_moves_list", alice_api, "get", f"{url}moves/")
    call("games_events", alice_api, "get", f"{url}events/?since=0")
    call("games_replay", alice_api, "get", f"{url}replay/?download=1")

    bot = call("bots_create", alice_api, "post", "/api/bots/",
               data={"name": "examples-bot", "url": "http://127.0.0.1:9/"}).json()
    bot_url = f"/api/bots/{bot['id']}/"
    call("bots_list", bob_api, "get", "/api/bots/")
    call("bots_retrieve", alice_api, "get", bot_url)
    call("bots_retrieve", bob_api, "get", bot_url)  # someone else's: the public fields
    call("bots_update", alice_api, "patch", bot_url, data={"description": "Plays high."})
    call("bots_rotate_secret", alice_api, "post", f"{bot_url}rotate-secret/")
    try:
        call("bots_verify", alice_api, "post", f"{bot_url}verify/")  # nobody answers there
    finally:
        close_default_transport()
    call("bots_stats", alice_api, "get", f"{bot_url}stats/")
    call("bots_calls", alice_api, "get", f"{bot_url}calls/")
    _tournament_calls(call, alice, alice_api, bob, bob_api, bot["id"])

    problems: list[str] = []
    compared: set[str] = set()
    answers: dict[tuple[str, str], list[Any]] = {}
    for operation_id, response in seen:
        status = str(response.status_code)
        declared = operation(operation_id)["responses"].get(status)
        assert declared is not None, (operation_id, status)
        headers = declared.get("headers", {})
        problems += [
            f"{operation_id} {status}: sends {name}, not declared"
            for name in HEADERS if response.has_header(name) and name not in headers
        ]
        problems += [
            f"{operation_id} {status}: declares {name} as required, not sent"
            for name, spec in headers.items()
            if spec.get("required") and not response.has_header(name)
        ]
        if status.startswith("2") and response.content:
            compared.add(operation_id)
            answers.setdefault((operation_id, status), []).append(response.json())
    # Each example has the keys of one of the answers (an operation may answer in two shapes:
    # a bot's page to its owner and to anyone else).
    for (operation_id, status), bodies in answers.items():
        for example in examples_of(operation(operation_id), status):
            found = [same_keys(example, body) for body in bodies]
            if all(found):
                problems += [f"{operation_id} {status}: {problem}" for problem in found[0]]
    assert not problems, "\n".join(problems)
    with_examples = {op["operationId"] for op in operations() for status in op["responses"]
                     if status.startswith("2") and examples_of(op, status)}
    assert with_examples <= compared, f"not compared with a real answer: {with_examples - compared}"


def _tournament_calls(call: Any, alice: Any, alice_api: APIClient, bob: Any,
                      bob_api: APIClient, bot_id: int) -> None:
    """The tournament, leaderboard and rating operations, on a tournament run to its end."""
    from arena import services as arena_services
    from bots.models import Bot
    from tests.bots.helpers import register

    Bot.objects.filter(pk=bot_id).update(verified=True)
    bobs, _ = register(bob, "examples-bob", "http://127.0.0.1:9/")
    Bot.objects.filter(pk=bobs.pk).update(verified=True)
    made = call("tournaments_create", alice_api, "post", "/api/tournaments/",
                data={"name": "Examples", "options": {"single_hand": True},
                      "games_per_pairing": 1}).json()
    url = f"/api/tournaments/{made['id']}/"
    call("tournaments_enter", alice_api, "post", f"{url}entrants/", data={"bot": bot_id})
    call("tournaments_enter", bob_api, "post", f"{url}entrants/", data={"bot": bobs.pk})
    call("tournaments_withdraw", bob_api, "delete", f"{url}entrants/{bobs.pk}/")
    call("tournaments_enter", bob_api, "post", f"{url}entrants/", data={"bot": bobs.pk})
    call("tournaments_list", bob_api, "get", "/api/tournaments/?status=draft")
    call("tournaments_partial_update", alice_api, "patch", url, data={"games_per_pairing": 1})
    # Played here, in the foreground (nobody answers at the bots' URL: they forfeit).
    try:
        arena_services.tournament_run_foreground(tournament_id=made["id"])
    finally:
        close_default_transport()
    call("tournaments_retrieve", bob_api, "get", url)
    call("tournaments_standings", bob_api, "get", f"{url}standings/")
    call("tournaments_games", bob_api, "get", f"{url}games/")
    call("leaderboard", bob_api, "get", "/api/leaderboard/?rule_set=single_hand")
    call("bots_ratings", bob_api, "get", f"/api/bots/{bot_id}/ratings/?rule_set=single_hand")
    other = call("tournaments_create", alice_api, "post", "/api/tournaments/",
                 data={"name": "Cancelled"}).json()
    call("tournaments_cancel", alice_api, "post", f"/api/tournaments/{other['id']}/cancel/")
    # Start: the owner's answer (the games then run in the background, or on a worker).
    third = call("tournaments_create", alice_api, "post", "/api/tournaments/",
                 data={"name": "Started"}).json()
    for client, entrant in ((alice_api, bot_id), (bob_api, bobs.pk)):
        client.post(f"/api/tournaments/{third['id']}/entrants/", {"bot": entrant},
                    format="json")
    call("tournaments_start", alice_api, "post", f"/api/tournaments/{third['id']}/start/")
    alice_api.post(f"/api/tournaments/{third['id']}/cancel/")


@pytest.mark.parametrize(
    ("operation_id", "status", "codes"),
    [
        ("games_join", "409", {"already_seated", "seat_taken", "game_full", "game_not_open"}),
        ("games_start", "403", {"not_creator"}),
        ("games_start", "409", {"game_not_open", "seats_open"}),
        ("games_moves_create", "409",
         {"stale_version", "not_your_turn", "game_not_running", "seat_forfeited"}),
        ("games_moves_create", "422", {"illegal_move", "idempotency_key_reused"}),
        ("games_replay", "409", {"game_not_over", "replay_held"}),
        ("tokens_create", "401", {"authentication_failed"}),
        ("tournaments_enter", "409", {"bot_not_eligible", "tournament_conflict"}),
        ("tournaments_enter", "403", {"not_bot_owner"}),
        ("tournaments_withdraw", "404", {"not_entered"}),
        ("tournaments_start", "403", {"not_tournament_owner"}),
        ("tournaments_cancel", "403", {"not_tournament_owner"}),
    ],
)
def test_error_examples_are_the_errors_the_operation_really_answers(
    operation_id: str, status: str, codes: set[str]
) -> None:
    assert {e["code"] for e in examples_of(operation(operation_id), status)} == codes
