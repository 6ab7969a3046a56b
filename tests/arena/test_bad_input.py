"""Bad input is a 4xx with the JSON error body, never a 500 or a guess: bodies nested absurdly
deep, strings no database can hold (NUL, a lone surrogate), numbers written loosely, bodies of
the wrong type or size; and with DEBUG off, every error under /api/ raised outside DRF's views
(a bad Host header, an unexpected exception) has the error body too, while the rest of the site
keeps Django's pages."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from arena import views
from arena.accounts.services import token_create
from games import selectors
from tests.games.conftest import client_for, create_game

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_and_fresh(settings: Any, fresh_cache: None) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice_api(alice: Any) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: Any) -> APIClient:
    return client_for(bob)


def _raw(client: Client, url: str, body: str | bytes, content_type: str = "application/json",
         method: str = "post", **extra: Any) -> Any:
    return getattr(client, method)(url, body, content_type=content_type, **extra)


def _error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the API's error body with this status (and code)."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json", response.content
    body = response.json()
    assert set(body) >= {"code", "detail"}, body
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture
def write_endpoints(alice_api: APIClient, bob_api: APIClient, alice: Any) -> list[Any]:
    """(client, url) of every operation that reads a JSON body."""
    open_game = create_game(alice_api, seats=3)
    running = create_game(alice_api, seats=2, options={"single_hand": True})
    assert bob_api.post(f"/api/games/{running['id']}/join/").status_code == 200
    assert alice_api.post(f"/api/games/{running['id']}/start/").status_code == 200
    return [
        (APIClient(), "/api/accounts/"),
        (APIClient(), "/api/tokens/"),
        (alice_api, "/api/tokens/"),
        (alice_api, "/api/games/"),
        (bob_api, f"/api/games/{open_game['id']}/join/"),
        (alice_api, f"/api/games/{running['id']}/moves/"),
    ]


# --- bodies no field could mean ----------------------------------------------------------------
@pytest.mark.parametrize("depth", [33, 500, 948, 960, 5000, 100_000])
@pytest.mark.parametrize("shape", ["array", "object"])
def test_json_nested_absurdly_deep_is_a_400_on_every_json_endpoint(
    write_endpoints: list[Any], depth: int, shape: str
) -> None:
    opening, closing = ("[", "]") if shape == "array" else ('{"a":', "}")
    deep = opening * depth + "1" + closing * depth
    for client, url in write_endpoints:
        for body in (deep, f'{{"version": 0, "move": {deep}}}', f'{{"options": {deep}}}'):
            response = _raw(client, url, body)
            detail = _error(response, 400, "parse_error")["detail"]
            assert "nested deeper than 32 levels" in detail, (url, depth)


def test_a_body_nested_within_the_limit_is_judged_by_the_fields_not_the_parser(
    alice_api: APIClient,
) -> None:
    within = "[" * 30 + "]" * 30
    response = _raw(alice_api, "/api/games/", f'{{"options": {{"seven_o": {within}}}}}')
    assert _error(response, 400, "invalid")["fields"]
    # Brackets inside strings are text, however many.
    response = _raw(alice_api, "/api/games/", json.dumps({"options": {"[" * 100: True}}))
    assert _error(response, 400, "invalid")["fields"]


@pytest.mark.parametrize(
    "body",
    [
        '{"\\udfff": 2}',  # a lone low surrogate as a field name
        '{"seats": 2, "options": {"\\ud800": true}}',
        '{"seats": 2, "options": {"x": "a\\udbffb"}}',
        '{"seats": "\\udc00"}',
    ],
)
def test_a_lone_surrogate_anywhere_is_a_400_not_a_crash_rendering_the_error(
    alice_api: APIClient, body: str
) -> None:
    detail = _error(_raw(alice_api, "/api/games/", body), 400, "parse_error")["detail"]
    assert "surrogate" in detail


def test_a_surrogate_pair_is_one_character_and_welcome(alice_api: APIClient) -> None:
    # "\ud83c\udccf" is U+1F0CF, escaped as JSON encoders with ensure_ascii write it.
    body = '{"username": "joker", "password": "a long pass \\ud83c\\udccf"}'
    assert _raw(APIClient(), "/api/accounts/", body).status_code == 201
    assert APIClient().post(
        "/api/tokens/", {"username": "joker", "password": "a long pass \U0001f0cf"}
    ).status_code == 201


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/accounts/", '{"username": "zed", "password": "a long pass\\u0000"}'),
        ("/api/tokens/", '{"username": "al\\u0000ice", "password": "alice-password-1"}'),
        ("/api/games/", '{"options": {"\\u0000": true}}'),
    ],
)
def test_nul_in_a_json_string_is_a_400_before_it_reaches_the_database(
    url: str, body: str, alice_api: APIClient
) -> None:
    for client in (APIClient(), alice_api):
        if url == "/api/games/" and client is not alice_api:
            continue
        detail = _error(_raw(client, url, body), 400, "parse_error")["detail"]
        assert "NUL" in detail


def test_a_token_id_with_nul_names_no_token(alice_api: APIClient, alice: Any) -> None:
    for url in ("/api/tokens/%00/", "/api/tokens/uno_%00abc/"):
        _error(alice_api.delete(url), 404, "not_found")
    assert alice_api.get("/api/tokens/").status_code == 200  # nothing was half-done


def test_nul_in_a_basic_auth_username_is_wrong_credentials(alice: Any) -> None:
    for username in ("al\x00ice", "\x00", "alice\x00"):
        basic = base64.b64encode(f"{username}:alice-password-1".encode()).decode()
        response = APIClient().post("/api/tokens/", HTTP_AUTHORIZATION=f"Basic {basic}")
        _error(response, 401, "authentication_failed")


def test_a_control_character_in_a_token_is_refused_before_the_database(alice: Any) -> None:
    _, key = token_create(user=alice)
    for bad in (key[:10] + "\x00" + key[11:], "\x00", key[:15] + "\x01"):
        response = APIClient().get("/api/games/", HTTP_AUTHORIZATION=f"Token {bad}")
        _error(response, 401, "authentication_failed")


def test_an_idempotency_key_with_nul_is_a_400(alice_api: APIClient, bob_api: APIClient) -> None:
    game = create_game(alice_api, seats=2, options={"single_hand": True})
    assert bob_api.post(f"/api/games/{game['id']}/join/").status_code == 200
    started = alice_api.post(f"/api/games/{game['id']}/start/").json()
    client = alice_api if started["awaiting"] == 0 else bob_api
    response = client.post(
        f"/api/games/{game['id']}/moves/",
        {"version": started["version"], "move": {"type": "draw"}}, format="json",
        HTTP_IDEMPOTENCY_KEY="retry\x00-1",
    )
    assert "Idempotency-Key" in _error(response, 400, "invalid")["fields"]


# --- numbers as the schema writes them -----------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/games/", {"seats": 2.0}, "seats"),
        ("/api/games/", {"turn_seconds": 60.0}, "turn_seconds"),
        ("/api/games/", {"max_strikes": 3.0}, "max_strikes"),
        ("/api/games/", {"seats": True}, "seats"),
        ("/api/tokens/", {"expires_in": 3600.0}, "expires_in"),
    ],
)
def test_a_whole_number_written_as_a_float_is_not_an_integer(
    alice_api: APIClient, url: str, body: dict[str, Any], field: str
) -> None:
    assert field in _error(alice_api.post(url, body, format="json"), 400, "invalid")["fields"]


def test_a_move_version_written_as_a_float_is_a_400_not_version_one(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2, options={"single_hand": True})
    assert bob_api.post(f"/api/games/{game['id']}/join/").status_code == 200
    started = alice_api.post(f"/api/games/{game['id']}/start/").json()
    client = alice_api if started["awaiting"] == 0 else bob_api
    body = f'{{"version": {started["version"]}.0, "move": {{"type": "draw"}}}}'
    response = _raw(client, f"/api/games/{game['id']}/moves/", body)
    assert "version" in _error(response, 400, "invalid")["fields"]
    _error(alice_api.post(f"/api/games/{game['id']}/join/", {"seat": 1.0}, format="json"), 400)


@pytest.mark.parametrize(
    "wait", ["%205", "5%20", "%D9%A5", "%EF%BC%95", "5_0", "nan", "inf", "infinity", "+5", ".5",
             "5.", "0x5", "%E0%A5%AB"],
)
def test_a_wait_not_written_as_a_plain_number_is_a_400(
    alice_api: APIClient, wait: str
) -> None:
    game = create_game(alice_api, seats=2)
    for url in (f"/api/games/{game['id']}/view/", f"/api/games/{game['id']}/events/"):
        response = alice_api.get(f"{url}?wait={wait}")
        assert "wait" in _error(response, 400, "invalid")["fields"], (url, wait)
    response = alice_api.post(f"/api/games/{game['id']}/moves/?wait={wait}", {}, format="json")
    assert "wait" in _error(response, 400, "invalid")["fields"], wait


@pytest.mark.parametrize("wait", ["0", "5", "05", "2.5", "0.000001", "1e1", "25"])
def test_a_wait_written_as_a_number_is_taken(alice_api: APIClient, wait: str) -> None:
    game = create_game(alice_api, seats=2)
    # Answered at once (a view without If-None-Match, events already there): the query taken.
    for url in (f"/api/games/{game['id']}/view/?wait={wait}",
                f"/api/games/{game['id']}/events/?since=0&wait={wait}"):
        response = alice_api.get(url)
        assert response.status_code == 200, (url, response.content)


# --- bodies of the wrong type or size ------------------------------------------------------------
@pytest.mark.parametrize(
    "content_type", ["*/*", "application/*", "*/json", "*/*; charset=utf-8", "text/plain",
                     "application/json-patch+json"],
)
def test_a_body_that_is_not_declared_json_is_a_415(
    alice_api: APIClient, content_type: str
) -> None:
    response = _raw(alice_api, "/api/games/", json.dumps({"seats": 2}), content_type)
    _error(response, 415, "unsupported_media_type")


def test_json_with_a_charset_parameter_is_json(alice_api: APIClient) -> None:
    response = _raw(alice_api, "/api/games/", json.dumps({"seats": 2}),
                    "application/json; charset=utf-8")
    assert response.status_code == 201, response.content


def test_a_body_over_the_size_limit_is_a_413_with_the_error_body(
    alice_api: APIClient, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"seats": 2, "options": {"x": "a" * 1000}})
    for debug in (False, True):
        with override_settings(DEBUG=debug):
            response = _raw(alice_api, "/api/games/", body)
            detail = _error(response, 413, "request_too_large")["detail"]
            assert "1000 bytes" in detail
    response = _raw(APIClient(), "/api/accounts/", json.dumps({"username": "a" * 2000}))
    _error(response, 413, "request_too_large")


def test_too_many_query_parameters_is_a_400_with_the_error_body(
    alice_api: APIClient, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    query = "&".join(f"x{i}=1" for i in range(20))
    _error(alice_api.get(f"/api/games/?{query}"), 400, "bad_request")


# --- production: errors outside DRF's views ------------------------------------------------------
@override_settings(DEBUG=False)
def test_the_api_root_is_a_json_index_of_the_schema_and_docs() -> None:
    response = Client().get("/api/")
    assert response.status_code == 200
    index = response.json()
    assert index["schema"] == "/api/schema/"
    assert index["docs"] == "/api/docs/"
    assert Client().get(index["schema"]).status_code == 200
    # Where each part starts: every part of the API a client may look for.
    assert {index[part] for part in ("games", "stream", "bots", "tournaments", "leaderboard")} \
        == {"/api/games/", "/api/stream/", "/api/bots/", "/api/tournaments/", "/api/leaderboard/"}
    _error(Client().post("/api/"), 405, "method_not_allowed")


@override_settings(DEBUG=False, ALLOWED_HOSTS=["uno.example.org"])
def test_a_disallowed_host_is_a_json_400_under_api_and_django_s_page_elsewhere() -> None:
    client = Client(HTTP_HOST="evil.example")
    _error(client.get("/api/games/"), 400, "bad_request")
    _error(client.post("/api/accounts/", {}, content_type="application/json"), 400)
    page = client.get("/admin/login/")
    assert page.status_code == 400
    assert page["Content-Type"].startswith("text/html")


@override_settings(DEBUG=False, APPEND_SLASH=False)
def test_a_django_404_is_json_under_api_and_html_elsewhere(django_user_model: Any) -> None:
    client = Client()
    _error(client.get("/api/games"), 404, "not_found")  # not redirected: the resolver's 404
    page = client.get("/no-such-page/")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")
    django_user_model.objects.create_superuser("root", password="root-password-1")
    client.login(username="root", password="root-password-1")
    page = client.get("/admin/no-such-page/")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")


@override_settings(DEBUG=False)
def test_an_unexpected_exception_is_a_json_500_under_api_and_html_elsewhere(
    alice_api: APIClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(selectors, "game_list", broken)
    alice_api.raise_request_exception = False
    _error(alice_api.get("/api/games/"), 500, "server_error")

    class NoDatabase:
        def cursor(self) -> Any:
            return broken()

    monkeypatch.setattr(views, "connection", NoDatabase())
    client = Client(raise_request_exception=False)
    page = client.get("/healthz/")
    assert page.status_code == 500
    assert page["Content-Type"].startswith("text/html")


# --- keys given twice, bodies for operations that take none -----------------------------------
@pytest.mark.parametrize("body", [
    '{"seats": 2, "seats": 3}',
    '{"seats": 2, "options": {"single_hand": true, "single_hand": false}}',
])
def test_a_key_given_twice_is_a_400_not_a_guess_at_which_one_was_meant(
    alice_api: APIClient, body: str
) -> None:
    detail = _error(_raw(alice_api, "/api/games/", body), 400, "parse_error")["detail"]
    assert "given twice" in detail
    assert alice_api.get("/api/games/").json()["count"] == 0


def _bodyless_operations(alice: Any, alice_api: APIClient, bob_api: APIClient) -> list[Any]:
    """(client, url, what to read back, how it must still read) of every operation that takes
    no body."""
    from arena.models import Tournament
    from tests.arena.test_tournament_api import verified_bot

    table = create_game(alice_api, seats=2)
    assert bob_api.post(f"/api/games/{table['id']}/join/").status_code == 200
    bot = verified_bot(alice, "alices-bot")
    draft = alice_api.post("/api/tournaments/", {"name": "cup", "options": {}},
                           format="json").json()
    running = Tournament.objects.create(name="live", owner=alice, options={}, seed=1,
                                        status="running")
    return [
        (alice_api, f"/api/games/{table['id']}/start/", f"/api/games/{table['id']}/",
         ("status", "open")),
        (alice_api, f"/api/tournaments/{draft['id']}/start/",
         f"/api/tournaments/{draft['id']}/", ("status", "draft")),
        (alice_api, f"/api/tournaments/{running.pk}/cancel/",
         f"/api/tournaments/{running.pk}/", ("status", "running")),
        (alice_api, f"/api/bots/{bot.pk}/verify/", f"/api/bots/{bot.pk}/", ("verified", True)),
        (alice_api, f"/api/bots/{bot.pk}/rotate-secret/", f"/api/bots/{bot.pk}/",
         ("previous_secret_until", None)),
    ]


@pytest.mark.parametrize(("body", "code"), [("{", "parse_error"), ('{"x": 1}', "invalid"),
                                            ("[]", "invalid"), ("null", "invalid")])
def test_an_operation_that_takes_no_body_refuses_one_and_changes_nothing(
    alice: Any, alice_api: APIClient, bob_api: APIClient, body: str, code: str
) -> None:
    for client, url, read, (field, before) in _bodyless_operations(alice, alice_api, bob_api):
        _error(_raw(client, url, body), 400, code)
        assert client.get(read).json()[field] == before, url


def test_an_operation_that_takes_no_body_takes_an_empty_object(
    alice: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    table = create_game(alice_api, seats=2)
    assert bob_api.post(f"/api/games/{table['id']}/join/").status_code == 200
    assert _raw(alice_api, f"/api/games/{table['id']}/start/", "{}").status_code == 200


def test_leaving_with_a_misspelt_field_is_a_400_and_keeps_the_seat(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    table = create_game(alice_api, seats=2)
    assert bob_api.post(f"/api/games/{table['id']}/join/").status_code == 200
    body = _error(_raw(bob_api, f"/api/games/{table['id']}/leave/", '{"bots": 6}'), 400)
    assert body["fields"] == {"bots": ["Unknown field."]}
    assert [s["player"] for s in alice_api.get(f"/api/games/{table['id']}/").json()["seats"]
            ].count("bob") == 1


def test_an_integer_too_long_for_a_query_says_the_limit(alice_api: APIClient) -> None:
    game = create_game(alice_api, seats=2)
    body = _error(alice_api.get(f"/api/games/{game['id']}/events/",
                                {"since": "9" * 23}), 400, "invalid")
    assert "less than or equal to 9223372036854775807" in body["fields"]["since"][0]


def test_a_number_of_thousands_of_digits_is_a_parse_error_without_pythons_advice(
    alice_api: APIClient,
) -> None:
    detail = _error(_raw(alice_api, "/api/games/", '{"seats": ' + "7" * 5000 + "}"), 400,
                    "parse_error")["detail"]
    assert "digits" in detail and "sys." not in detail
