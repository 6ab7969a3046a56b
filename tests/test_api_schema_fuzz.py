"""Schemathesis over the served OpenAPI schema: every operation, authenticated as alice.

The schema is loaded from the running app (``/api/schema/`` through WSGI, no server), so what is
fuzzed is exactly what clients download. Each operation is one pytest item (they spread over
xdist workers) with fresh data: alice (with a real knox token) sits in an open game she created,
a running game and a finished one with a replay; bob has an open table with a free seat and
charlie a running game alice is not in. Path ids are steered onto those objects (and onto one
that does not exist), so the fuzzer reaches the success paths, not only 404s.

Every response must pass every schemathesis check except the ones excluded below (with why):
no 5xx, status code documented, content type, headers and body matching the schema, invalid
input rejected, auth enforced. Generation is positive and negative, over the schema's examples,
the coverage phase (boundary values, missing/wrong-typed fields) and random fuzzing.

Budget: ``FUZZ_EXAMPLES`` random examples per operation (default 15, seeded and deterministic so
CI is reproducible; ``FUZZ_SEED`` changes the seed). ``python3 dev.py fuzz`` runs 500.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.throttling import ScopedRateThrottle
from schemathesis.specs.openapi import checks

from arena.accounts.services import token_create
from arena.wsgi import application
from games import clock, selectors, services
from games.models import Game, GameStatus
from tests.games.conftest import choose

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "15"))
SEED = int(os.environ.get("FUZZ_SEED", "20250101"))

CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {
            "mode": "all",
            "max-examples": EXAMPLES,
            "deterministic": True,
            "database": "none",
        },
    }
)

schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)

EXCLUDED_CHECKS = [
    # Valid-by-schema requests are legitimately refused by business rules the schema cannot
    # express: sign-up with a taken name or a weak password (400), joining a full table (409),
    # moving out of turn or with a stale version (409), an illegal card (422), starting a game
    # you did not create (403)... Every such refusal is still checked to be documented and to
    # have the error body, by the conformance checks.
    checks.positive_data_acceptance,
]


# --- data the fuzzer can hit ------------------------------------------------------------------
class World:
    """Token and ids of the objects created for the current test, read by `steer` below."""

    token: str = ""
    games: dict[str, int] = {}
    token_ids: list[str] = []


# Which game an operation (by path suffix) does most with; the others get the running one.
PRIMARY = {"join": "bobs_open", "leave": "mine_open", "start": "mine_open", "replay": "finished"}


def _play(game_id: int, *, until_seat: int | None = None, seed: int = 0) -> None:
    """Random legal moves (through the services) until the game is over, or until
    ``until_seat`` is awaited to play a card or draw."""
    rng = random.Random(seed)
    for _ in range(5000):
        game = Game.objects.get(pk=game_id)
        if game.status != GameStatus.RUNNING:
            return
        seat = game.awaiting
        view = selectors.game_view(game=game, seat=seat)
        if seat == until_seat and view["phase"] == "play":
            return
        move = choose(rng, view["legal_moves"])
        services.move_play(game_id=game_id, seat=seat, move=move, expected_version=game.version)
    raise AssertionError("the game did not end")


@pytest.fixture
def _wsgi_keeps_the_test_connection() -> Iterator[None]:
    """Requests go through the real WSGI handler, whose request signals close "old" database
    connections: on PostgreSQL that would close the connection holding the test's transaction
    (SQLite's in-memory database ignores the close). Django's test client disconnects the
    same handler around each request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(
    _wsgi_keeps_the_test_connection: None,
    db: Any,
    alice: Any,
    bob: Any,
    charlie: Any,
    settings: Any,
    fresh_cache: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> World:
    # Thousands of expected 4xx would each log a warning; server errors still log.
    caplog.set_level(logging.ERROR, logger="django.request")
    # No throttling while fuzzing (the rates are read once, at import, by ScopedRateThrottle).
    rates = {scope: "100000/second"
             for scope in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", rates)
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Long polls (`wait` up to 25 s) must not really block: sleeping or waiting for a change
    # advances a fake monotonic clock instead, so a fuzzed `wait=25` costs a few quick
    # re-reads, not 25 s.
    offset = [0.0]
    real_monotonic = clock.monotonic

    def sleep(seconds: float) -> None:
        offset[0] += seconds

    def wait(event: threading.Event, seconds: float) -> bool:
        if event.is_set():
            return True
        sleep(seconds)
        return False

    monkeypatch.setattr(clock, "monotonic", lambda: real_monotonic() + offset[0])
    monkeypatch.setattr(clock, "sleep", sleep)
    if hasattr(clock, "wait"):
        monkeypatch.setattr(clock, "wait", wait)

    def started(creator: Any, other: Any, seed: int) -> Game:
        game = services.game_create(user=creator, options={"single_hand": True}, seats=2)
        Game.objects.filter(pk=game.pk).update(seed=seed)  # the same deal every run
        services.seat_join(game_id=game.pk, user=other)
        return services.game_start(game_id=game.pk, user=creator)

    mine_open = services.game_create(user=alice, options={}, seats=2)
    bobs_open = services.game_create(user=bob, options={}, seats=3)
    running = started(alice, bob, seed=1)
    _play(running.pk, until_seat=0)  # alice (seat 0) is to play
    finished = started(alice, bob, seed=2)
    _play(finished.pk)
    others = started(charlie, bob, seed=3)

    _, key = token_create(user=alice)
    spare = [token_create(user=alice)[0].token_key for _ in range(2)]
    World.token = key
    World.games = {
        "running": running.pk, "mine_open": mine_open.pk, "bobs_open": bobs_open.pk,
        "finished": finished.pk, "others": others.pk,
    }
    World.token_ids = spare
    return World


# --- alice's token on every request, path ids onto existing objects ----------------------------
@schema.auth(refresh_interval=None)
class AliceToken:
    def get(self, case: schemathesis.Case, ctx: schemathesis.AuthContext) -> str:
        return World.token

    def set(self, case: schemathesis.Case, data: str, ctx: schemathesis.AuthContext) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}


def steer(case: schemathesis.Case) -> None:
    """Alice's current token, and most generated ids onto the fixture's objects; the other ids
    stay as generated (an id that does not exist, or a negative value of the wrong type).

    Done here, at call time: the examples and coverage phases build their cases (auth and
    ``map_*`` hooks included) at collection, before the fixture has created anything."""
    if (case.headers or {}).get("Authorization", "").startswith("Token "):
        case.headers = {**case.headers, "Authorization": f"Token {World.token}"}
    value = (case.path_parameters or {}).get("id")
    if value is None:
        return
    path = case.operation.path
    if path.startswith("/api/games/") and (
        type(value) is int or (isinstance(value, str) and value.isascii() and value.isdigit())
    ):
        # The coverage phase sends its ids as strings, and the same one for every body variant:
        # id 0 is the game where the operation does something (the running game for a move).
        suffix = path.removeprefix("/api/games/{id}/").rstrip("/")
        first = World.games[PRIMARY.get(suffix, "running")]
        pool: list[Any] = [first, *(g for g in World.games.values() if g != first)]
        index = int(value) % (len(pool) + 1)  # a sixth keep their generated value
    elif path.startswith("/api/tokens/") and isinstance(value, str):
        pool = World.token_ids
        index = len(value) % (len(pool) + 1)
    else:
        return
    if index < len(pool):
        case.path_parameters = {**case.path_parameters, "id": pool[index]}
    # Half the moves carry the game's current version, so some are played (201) instead of
    # all being stale (409).
    body, game_id = case.body, case.path_parameters["id"]
    version = body.get("version") if isinstance(body, dict) else None
    if path.endswith("/moves/") and type(game_id) is int and type(version) is int and (
        version % 2 == 0
    ):
        current = Game.objects.filter(pk=game_id).values_list("version", flat=True).first()
        case.body = {**body, "version": current if current is not None else 0}


@schema.parametrize()
# The world is made once per operation, not per example, on purpose: examples build on what the
# earlier ones did (a join, a move, a revoked token), like a client would.
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_api_conforms_to_its_schema(case: schemathesis.Case, world: World) -> None:
    steer(case)
    case.call_and_validate(excluded_checks=EXCLUDED_CHECKS)
    # Bob answers at once, so alice's next move can be legal again (until the hand ends).
    _play(World.games["running"], until_seat=0)


# --- what the fuzzer found, pinned as plain tests ------------------------------------------------
@pytest.fixture
def api(world: World) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.token}")
    return client


QUERY_REFUSALS = [
    ("/api/games/?page_size=null", "page_size"),
    ("/api/games/?page_size=0", "page_size"),
    ("/api/games/?page_size=101", "page_size"),
    ("/api/games/?status=", "status"),
    ("/api/games/?mine=", "mine"),
    ("/api/games/?open_seats=maybe", "open_seats"),
    ("/api/games/{running}/moves/?page_size=x", "page_size"),
    ("/api/games/{running}/moves/?page_size=1001", "page_size"),
    ("/api/games/{running}/events/?since=", "since"),
    ("/api/games/{running}/events/?wait=", "wait"),
    ("/api/games/{running}/view/?wait=", "wait"),
    ("/api/games/{finished}/replay/?download=perhaps", "download"),
]


def test_query_values_the_schema_forbids_are_a_400_naming_the_parameter(
    api: Any, world: World
) -> None:
    for url, field in QUERY_REFUSALS:
        response = api.get(url.format(**world.games))
        assert response.status_code == 400, (url, response.content)
        assert response.json()["code"] == "invalid", url
        assert field in response.json()["fields"], url


@pytest.mark.parametrize("page", ["", "0", "-1", "x", "last", "1.5"])
def test_a_page_that_is_not_a_number_from_one_is_a_400_not_page_one(
    api: Any, page: str
) -> None:
    response = api.get(f"/api/games/?page={page}")
    assert response.status_code == 400
    assert "page" in response.json()["fields"]


def test_a_page_past_the_end_is_a_404(api: Any) -> None:
    assert api.get("/api/games/?page_size=100&page=1&mine=true").status_code == 200
    response = api.get("/api/games/?page=99")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


BODY_REFUSALS = [
    ("/api/accounts/", {"username": 0, "password": "a long pass 42"}, "username"),
    ("/api/accounts/", {"username": "zed", "password": 1234567890123}, "password"),
    # Authenticated by token the body's credentials are not needed, but still checked.
    ("/api/tokens/", {"username": 7}, "username"),
    ("/api/tokens/", {"password": ["x"]}, "password"),
    ("/api/tokens/", {"expires_in": "3600"}, "expires_in"),
    ("/api/tokens/", {"expires": 3600}, "expires"),
    # A misspelt field is named, not ignored while its default applies.
    ("/api/games/", {"seat": 3}, "seat"),
    ("/api/games/", {"seats": "3"}, "seats"),
    ("/api/games/", {"turn_seconds": "30"}, "turn_seconds"),
    ("/api/games/", {"max_strikes": 2.5}, "max_strikes"),
]


def test_json_bodies_of_the_wrong_type_are_refused(api: Any) -> None:
    for url, body, field in BODY_REFUSALS:
        response = api.post(url, body, format="json")
        assert response.status_code == 400, (url, body, response.content)
        assert field in response.json()["fields"], (url, body)


def test_an_api_path_with_a_newline_is_a_json_404(api: Any) -> None:
    response = api.get("/api/games/%0A1/view/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_an_id_beyond_bigint_is_a_404_on_every_database(api: Any) -> None:
    beyond = str(2**63)  # one past the largest 64-bit id
    for method, url in [
        ("get", "/api/games/99999999999999999999/"),
        ("get", "/api/games/-1/view/"),
        *(("get", f"/api/games/{beyond}/{end}/") for end in ("view", "moves", "events", "replay")),
        *(("post", f"/api/games/{beyond}/{end}/") for end in ("join", "leave", "start", "moves")),
    ]:
        response = getattr(api, method)(url)
        assert response.status_code == 404, (url, response.content)
        assert response.json()["code"] == "not_found"
