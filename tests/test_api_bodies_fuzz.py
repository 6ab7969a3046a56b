"""Arbitrary JSON (and not quite JSON) to every write endpoint: never a 5xx, and every refusal
is the API's JSON error body.

tests/test_api_schema_fuzz.py sends what the schema describes; this sends what it does not:
bodies nested thousands of levels deep, strings with NUL and lone surrogates, integers of
thousands of digits, ``1e400``, NaN, wrong types in every field, undecodable bytes, odd
charsets and Content-Types, arbitrary token ids in the path and arbitrary query strings.
The body is built as text, so the JSON a hostile client can write is not limited to what
Python's encoder produces. Each operation is one pytest item; its objects (games in every
state, tokens) are made once and examples build on what earlier ones did.

Budget: ``BODY_FUZZ_EXAMPLES`` examples per operation (default 60, derandomized so CI is
reproducible).
"""

from __future__ import annotations

import base64
import json
import logging
import os
from typing import Any
from urllib.parse import quote

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from arena.accounts.services import token_create
from games import services

EXAMPLES = int(os.environ.get("BODY_FUZZ_EXAMPLES", "60"))

pytestmark = pytest.mark.django_db

# --- JSON a client may write -------------------------------------------------------------------
_CHARACTERS = st.one_of(
    st.characters(),
    st.sampled_from(["\x00", "\x1f", "\u2028", "\ufeff", "\U0001f0cf", "\u0665", "\ufffd"]),
    st.integers(0xD800, 0xDFFF).map(chr),  # lone surrogates, written as \\udXXX escapes
)
_TEXT = st.text(_CHARACTERS, max_size=12)
_INTEGERS = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 2, 9, 10, 11, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1,
                     10**100]),
)
_LEAVES = st.one_of(
    st.none(), st.booleans(), _INTEGERS, st.floats(), _TEXT,
    st.sampled_from([1.0, 2.0, -0.0, 1e-400, 0.5]),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _dumps(value: Any) -> str:
    # ensure_ascii: lone surrogates become \\udXXX escapes; NaN and Infinity are written too.
    return json.dumps(value)


def _deep(depth: int, opening: str, closing: str, core: str = "1") -> str:
    return opening * depth + core + closing * depth


_RAW_NUMBERS = st.one_of(
    st.integers(1, 6000).map(lambda n: "9" * n),  # past Python's 4300-digit limit too
    st.sampled_from(["1e400", "-1e400", "1E-400", "123.456e789", "-0", "0.0", "1.0",
                     "NaN", "Infinity", "-Infinity", "00", "01", "1_000", "0x10", "+1"]),
)


def _body(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[str | bytes]:
    """Text of a request body: mostly the endpoint's own fields with arbitrary values."""
    names = st.sampled_from(sorted(fields)) if fields else _TEXT
    field_values = st.fixed_dictionaries(
        {}, optional={name: strategy | _VALUES for name, strategy in fields.items()}
    )
    with_extra = st.builds(lambda known, extra: {**extra, **known}, field_values,
                           st.dictionaries(_TEXT, _VALUES, max_size=2))
    deep = st.builds(
        lambda depth, shape, name: _deep(depth, *shape) if name is None
        else f'{{"{name}": {_deep(depth, *shape)}}}',
        st.integers(0, 3000), st.sampled_from([("[", "]"), ('{"a":', "}")]),
        st.none() | names,
    )
    number = st.builds(lambda name, raw: f'{{"{name}": {raw}}}', names, _RAW_NUMBERS)
    return st.one_of(
        field_values.map(_dumps), with_extra.map(_dumps), _VALUES.map(_dumps), deep, number,
        st.binary(max_size=40), _TEXT,
    )


_MOVE = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["play", "draw", "keep", "challenge", "accept", "catch", "uno",
                             "color"]) | _VALUES,
    "card": st.sampled_from(["R5", "W", "W4", "G7", "BS", "YD"]) | _VALUES,
    "color": st.sampled_from(["red", "green", "blue", "yellow"]) | _VALUES,
    "target": _INTEGERS | _VALUES,
    "uno": st.booleans() | _VALUES,
})
_OPTIONS = st.fixed_dictionaries({}, optional={
    name: st.booleans() | _INTEGERS | _VALUES
    for name in ("players", "stacking", "seven_o", "jump_in", "draw_until_playable",
                 "deck_2018", "start_2022", "single_hand", "target_score")
})
_CONTENT_TYPES = st.one_of(
    st.just("application/json"),
    st.sampled_from([
        "application/json; charset=utf-8", "application/json; charset=latin-1",
        "application/json; charset=utf-16", "application/json; charset=bz2_codec",
        "application/json; charset=nonsense", "*/*", "application/*", "text/plain",
        "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "",
    ]),
)


# --- the operations and the objects they act on ------------------------------------------------
class World:
    def __init__(self, alice: Any, bob: Any) -> None:
        def client(user: Any) -> APIClient:
            api = APIClient()
            api.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
            return api

        self.alice, self.bob = client(alice), client(bob)
        mine = services.game_create(user=alice, options={}, seats=2)
        bobs = services.game_create(user=bob, options={}, seats=3)
        running = services.game_create(user=alice, options={"single_hand": True}, seats=2)
        services.seat_join(game_id=running.pk, user=bob)
        services.game_start(game_id=running.pk, user=alice)
        self.games = {"mine": mine.pk, "bobs": bobs.pk, "running": running.pk}
        basic = base64.b64encode(b"alice:alice-password-1").decode()
        self.basic = APIClient()
        self.basic.credentials(HTTP_AUTHORIZATION=f"Basic {basic}")


# name -> (client attribute, path template, fields of its body)
OPERATIONS: dict[str, tuple[str, str, dict[str, st.SearchStrategy[Any]]]] = {
    "signup": ("anonymous", "/api/accounts/", {"username": _TEXT, "password": _TEXT}),
    "token_by_body": ("anonymous", "/api/tokens/", {
        "username": st.just("alice") | _TEXT, "password": st.just("alice-password-1") | _TEXT,
        "expires_in": _INTEGERS}),
    "token_by_basic": ("basic", "/api/tokens/", {"expires_in": _INTEGERS}),
    "token_by_token": ("alice", "/api/tokens/", {"expires_in": _INTEGERS}),
    "games_create": ("alice", "/api/games/", {
        "seats": _INTEGERS, "options": _OPTIONS, "turn_seconds": _INTEGERS,
        "max_strikes": _INTEGERS, "join": st.booleans()}),
    "games_join": ("alice", "/api/games/{bobs}/join/", {"seat": _INTEGERS}),
    "games_leave": ("bob", "/api/games/{bobs}/leave/", {}),
    "games_start": ("alice", "/api/games/{mine}/start/", {}),
    "games_moves": ("alice", "/api/games/{running}/moves/", {
        "version": _INTEGERS, "move": _MOVE}),
    "games_moves_bob": ("bob", "/api/games/{running}/moves/", {
        "version": _INTEGERS, "move": _MOVE}),
}


@pytest.fixture
def world(alice: Any, bob: Any, settings: Any, fresh_cache: None, monkeypatch: Any,
          caplog: pytest.LogCaptureFixture) -> World:
    caplog.set_level(logging.ERROR, logger="django.request")  # thousands of expected 4xx
    rates = {scope: "100000/second"
             for scope in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", rates)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return World(alice, bob)


def _client(world: World, name: str) -> APIClient:
    return APIClient() if name == "anonymous" else getattr(world, name)


def _send(client: APIClient, method: str, url: str, body: Any = b"",
          content_type: str = "application/json") -> Any:
    # A savepoint per request: a request that broke the transaction (a 500 the test then
    # reports) must not fail every later example too, or shrinking could not find the input.
    with transaction.atomic():
        return client.generic(method, url, body, content_type)


def _assert_answered(response: Any, what: object) -> None:
    assert response.status_code < 500, (what, response.content[:500])
    if response.status_code >= 400:
        assert response["Content-Type"] == "application/json", (what, response.content[:500])
        body = response.json()
        assert isinstance(body.get("code"), str), (what, body)
        assert isinstance(body.get("detail"), str), (what, body)


FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@FUZZ
@given(data=st.data())
def test_arbitrary_bodies_never_get_a_5xx(world: World, operation: str, data: Any) -> None:
    who, template, fields = OPERATIONS[operation]
    body = data.draw(_body(fields), label="body")
    content_type = data.draw(_CONTENT_TYPES, label="content_type")
    url = template.format(**world.games)
    raw = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    response = _send(_client(world, who), "POST", url, raw, content_type)
    _assert_answered(response, (url, content_type, body))


@FUZZ
@given(token_id=st.text(_CHARACTERS, min_size=1, max_size=30))
def test_arbitrary_token_ids_to_revoke_never_get_a_5xx(world: World, token_id: str) -> None:
    url = f"/api/tokens/{quote(token_id.encode('utf-8', 'surrogatepass'), safe='')}/"
    _assert_answered(_send(world.alice, "DELETE", url), url)


_QUERY = st.lists(st.tuples(st.sampled_from(["wait", "until", "since", "x"]) | _TEXT,
                            _TEXT | _RAW_NUMBERS), max_size=3)


@FUZZ
@given(query=_QUERY)
def test_arbitrary_queries_to_view_and_move_never_get_a_5xx(
    world: World, query: list[tuple[str, str]]
) -> None:
    def encode(text: str) -> str:
        return quote(text.encode("utf-8", "surrogatepass"), safe="")

    string = "&".join(f"{encode(key)}={encode(value)}" for key, value in query)
    game = world.games["running"]
    # A view without If-None-Match answers at once, whatever the wait; a move that is no move
    # (an empty body) is refused before any wait.
    _assert_answered(_send(world.alice, "GET", f"/api/games/{game}/view/?{string}"), string)
    _assert_answered(_send(world.alice, "POST", f"/api/games/{game}/moves/?{string}", b"{}"),
                     string)
