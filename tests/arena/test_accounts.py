"""Accounts and API tokens: sign up, create/list/revoke tokens, Token and Bearer schemes."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from arena.accounts.services import token_create, token_list
from core.authentication import TokenAuthentication, tokens_with_users

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_throttles(settings: Any, fresh_cache: None) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def _status_with(key: str, path: str) -> int:
    """The status of a GET of ``path`` with ``key`` as the token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return int(client.get(path).status_code)


def test_a_bot_writer_signs_up_and_gets_a_token_that_plays() -> None:
    client = APIClient()
    signed = client.post("/api/accounts/", {"username": "botty", "password": "a long pass 42"})
    assert signed.status_code == 201, signed.content
    assert signed.json()["username"] == "botty"
    assert "password" not in signed.json()
    token = client.post("/api/tokens/", {"username": "botty", "password": "a long pass 42"})
    assert token.status_code == 201, token.content
    key = token.json()["key"]
    assert key.startswith("uno_")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/games/").status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "x", "password": "123"}, "password"),
        ({"username": "x", "password": "password"}, "password"),
        ({"username": "bad name!", "password": "a long pass 42"}, "username"),
        ({"password": "a long pass 42"}, "username"),
        ({"username": "alice", "password": "a long pass 42"}, "username"),
    ],
)
def test_sign_up_rejects_weak_passwords_and_bad_or_taken_names(
    alice: Any, body: dict[str, str], field: str
) -> None:
    response = APIClient().post("/api/accounts/", body)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    assert field in response.json()["fields"]


def test_a_token_can_be_created_with_http_basic(alice: Any) -> None:
    response = APIClient().post(
        "/api/tokens/", {}, HTTP_AUTHORIZATION=_basic("alice", "alice-password-1")
    )
    assert response.status_code == 201
    assert response.json()["expiry"] is None


def test_wrong_credentials_get_no_token(alice: Any) -> None:
    response = APIClient().post("/api/tokens/", {"username": "alice", "password": "nope"})
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert not AuthToken.objects.exists()


def test_tokens_are_stored_hashed_and_listed_without_the_key(alice: Any) -> None:
    client = APIClient()
    key = client.post("/api/tokens/", {"username": "alice",
                                       "password": "alice-password-1"}).json()["key"]
    record = AuthToken.objects.get()
    assert key not in (record.digest, record.token_key)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    listed = client.get("/api/tokens/").json()
    assert listed == [{"id": record.token_key, "created": listed[0]["created"], "expiry": None}]
    assert key not in str(listed)


def test_a_user_has_several_tokens_with_an_optional_expiry(alice: Any) -> None:
    client = APIClient()
    auth = {"username": "alice", "password": "alice-password-1"}
    client.post("/api/tokens/", auth)
    short = client.post("/api/tokens/", {**auth, "expires_in": 3600}).json()
    expiry = timezone.datetime.fromisoformat(short["expiry"].replace("Z", "+00:00"))
    assert timedelta(minutes=59) < expiry - timezone.now() <= timedelta(hours=1)
    assert AuthToken.objects.filter(user=alice).count() == 2


def test_an_expired_token_is_refused(alice: Any) -> None:
    _, key = AuthToken.objects.create(user=alice, expiry=timedelta(seconds=-1))
    assert _status_with(key, "/api/games/") == 401


def test_a_revoked_token_stops_working_and_others_cannot_revoke_it(
    alice: Any, bob: Any
) -> None:
    record, key = AuthToken.objects.create(user=alice)
    _, bob_key = AuthToken.objects.create(user=bob)
    bob_client = APIClient()
    bob_client.credentials(HTTP_AUTHORIZATION=f"Token {bob_key}")
    assert bob_client.delete(f"/api/tokens/{record.token_key}/").status_code == 404
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete(f"/api/tokens/{record.token_key}/").status_code == 204
    assert client.get("/api/games/").status_code == 401


def test_a_malformed_authorization_header_is_a_401_in_the_error_shape() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token")
    response = client.get("/api/games/")
    assert response.status_code == 401
    assert set(response.json()) == {"code", "detail"}


def test_a_username_that_normalises_to_a_taken_one_is_a_400(alice: Any) -> None:
    client = APIClient()
    for name in ("ALICE", "\uff41\uff4c\uff49\uff43\uff45"):  # fullwidth "alice"
        response = client.post("/api/accounts/", {"username": name, "password": "a long pass 42"})
        assert response.status_code == 400, (name, response.content)
        assert "username" in response.json()["fields"]


def test_a_server_with_sign_up_closed_refuses_new_accounts_and_keeps_the_old(
    alice: Any, settings: Any
) -> None:
    settings.ACCOUNTS_SIGNUP_OPEN = False
    client = APIClient()
    refused = client.post("/api/accounts/", {"username": "dora", "password": "a long pass 42"})
    assert refused.status_code == 403
    assert refused.json()["code"] == "signup_closed"
    assert not get_user_model().objects.filter(username="dora").exists()
    auth = {"username": "alice", "password": "alice-password-1"}
    assert client.post("/api/tokens/", auth).status_code == 201  # accounts staff made still work


def test_sign_up_is_rate_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"signup": "2/hour"})
    client = APIClient()
    codes = [
        client.post("/api/accounts/", {"username": f"u{i}", "password": "a long pass 42"})
        .status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]


def test_token_creation_is_rate_limited(alice: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token": "1/hour"})
    client = APIClient()
    auth = {"username": "alice", "password": "alice-password-1"}
    assert client.post("/api/tokens/", auth).status_code == 201
    limited = client.post("/api/tokens/", auth)
    assert limited.status_code == 429
    assert limited.json()["code"] == "throttled"
    assert "Retry-After" in limited


def test_non_staff_users_cannot_reach_the_admin(client: Any, alice: Any) -> None:
    client.force_login(alice)
    for url in ("/admin/", "/admin/games/game/", "/admin/games/seat/",
                "/admin/games/moverecord/", "/admin/knox/authtoken/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/admin/login/" in response["Location"]


def test_staff_can_browse_every_games_admin_page(client: Any, django_user_model: Any) -> None:
    root = django_user_model.objects.create_superuser("root", password="root-password-1")
    from games.services import game_create

    game = game_create(user=root, options={}, seats=2)
    client.force_login(root)
    for url in ("/admin/games/game/", f"/admin/games/game/{game.pk}/change/",
                "/admin/games/seat/", "/admin/games/moverecord/", "/admin/games/gameevent/",
                "/admin/games/idempotencyrecord/"):
        assert client.get(url).status_code == 200, url


def test_games_and_seats_cannot_be_changed_in_the_admin(
    client: Any, django_user_model: Any
) -> None:
    root = django_user_model.objects.create_superuser("root", password="root-password-1")
    from games.models import Game
    from games.services import game_create

    game = game_create(user=root, options={}, seats=2)
    client.force_login(root)
    page = client.get(f"/admin/games/game/{game.pk}/change/")
    assert b'name="_save"' not in page.content
    client.post(f"/admin/games/game/{game.pk}/change/", {"status": "aborted"})
    assert Game.objects.get(pk=game.pk).status == game.status
    assert client.get("/admin/games/game/add/").status_code == 403
    seat = game.seats.get(index=1)
    assert client.get(f"/admin/games/seat/{seat.pk}/delete/").status_code == 403


@pytest.mark.django_db
def test_an_expired_token_is_refused_and_deleted(alice: Any) -> None:
    record, key = token_create(user=alice, expires_in=60)
    AuthToken.objects.filter(pk=record.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/tokens/").status_code == 401
    assert not AuthToken.objects.filter(pk=record.pk).exists()


@pytest.mark.django_db
def test_listing_tokens_sweeps_the_expired_ones(alice: Any) -> None:

    old, _ = token_create(user=alice, expires_in=60)
    AuthToken.objects.filter(pk=old.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    fresh, _ = token_create(user=alice)
    assert [t.pk for t in token_list(user=alice)] == [fresh.pk]


def test_wrong_basic_passwords_count_against_the_token_rate_limit(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token": "3/hour"})
    client = APIClient()
    guesses = [
        client.post("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", f"guess-{i}")).status_code
        for i in range(4)
    ]
    assert guesses == [401, 401, 401, 429]
    # Over the limit even the right password is refused: a 201 among the 429s would tell a
    # guesser which guess was right.
    right = client.post("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", "alice-password-1"))
    assert right.status_code == 429
    # From another address, alice is not locked out.
    elsewhere = client.post("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", "alice-password-1"),
                            REMOTE_ADDR="198.51.100.7")
    assert elsewhere.status_code == 201


def test_password_guesses_for_one_user_do_not_lock_out_the_others_at_that_address(
    alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a proxy every client has the proxy's address: counted per address alone, 60
    wrong guesses at anyone's password locked every user out of the password login."""
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token": "3/hour"})
    client = APIClient(REMOTE_ADDR="10.0.0.2")  # the proxy
    guesses = [
        client.post("/api/tokens/", {"username": "alice", "password": f"guess-{i}"}).status_code
        for i in range(4)
    ]
    assert guesses == [401, 401, 401, 429]
    # Any case or HTTP Basic is the same count for the same name.
    assert client.post("/api/tokens/", {"username": "ALICE", "password": "x"}).status_code == 429
    assert client.post("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", "x")).status_code == 429
    bobs = client.post("/api/tokens/", {"username": "bob", "password": "bob-password-1"})
    assert bobs.status_code == 201
    assert client.post("/api/tokens/", HTTP_AUTHORIZATION=_basic("bob", "x")).status_code == 401


def test_password_attempts_count_per_client_behind_a_counted_proxy(
    alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With NUM_PROXIES=1 (compose's proxy) the client's address is the one the proxy adds."""
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token": "2/hour"})
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = APIClient(REMOTE_ADDR="10.0.0.2")

    def attempt(client_address: str, password: str) -> int:
        return client.post(
            "/api/tokens/", {"username": "alice", "password": password},
            # The client's own word (left) is ignored; the proxy appended the real address.
            HTTP_X_FORWARDED_FOR=f"192.0.2.99, {client_address}",
        ).status_code

    assert [attempt("203.0.113.5", "wrong") for _ in range(3)] == [401, 401, 429]
    assert attempt("203.0.113.6", "alice-password-1") == 201


def test_a_token_made_with_a_short_lived_token_expires_no_later(alice: Any) -> None:
    _, key = token_create(user=alice, expires_in=60)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    forever = client.post("/api/tokens/", {}, format="json")
    assert forever.status_code == 201
    assert forever.json()["expiry"] is not None
    created = AuthToken.objects.get(token_key=forever.json()["id"])
    assert created.expiry <= timezone.now() + timedelta(seconds=60)


@pytest.mark.parametrize("header", [b"Bearer \xff", b"Token uno_\xe9\xe9", b"Basic \xff\xfe"])
def test_a_credential_that_is_not_ascii_is_a_401_not_a_500(header: bytes) -> None:
    response = APIClient().get("/api/games/", HTTP_AUTHORIZATION=header.decode("latin-1"))
    assert response.status_code == 401
    assert set(response.json()) == {"code", "detail"}


def test_a_client_cannot_dodge_the_sign_up_limit_with_x_forwarded_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"signup": "2/hour"})
    client = APIClient()
    codes = [
        client.post("/api/accounts/", {"username": f"v{i}", "password": "a long pass 42"},
                    HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]


def test_listing_tokens_with_a_wrong_password_says_the_password_is_wrong(alice: Any) -> None:
    response = APIClient().get("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", "nope"))
    assert response.status_code == 401
    assert response.json() == {"code": "authentication_failed",
                               "detail": "Invalid username or password."}
    right = APIClient().get("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", "alice-password-1"))
    assert right.status_code == 200


def test_passwords_sent_to_list_tokens_count_against_the_token_rate_limit(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"token": "3/hour"})
    client = APIClient()
    guesses = [
        client.get("/api/tokens/", HTTP_AUTHORIZATION=_basic("alice", f"guess-{i}")).status_code
        for i in range(4)
    ]
    assert guesses == [401, 401, 401, 429]
    # A token is not a guess: listing with one is not limited.
    _, key = token_create(user=alice)
    assert client.get("/api/tokens/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


@pytest.mark.parametrize(("method", "path"), [("delete", "/api/tokens/{id}/"),
                                              ("get", "/api/games/")])
def test_a_password_where_only_a_token_is_accepted_is_refused_as_that(
    alice: Any, method: str, path: str
) -> None:
    record, _ = token_create(user=alice)
    response = getattr(APIClient(), method)(
        path.format(id=record.token_key), HTTP_AUTHORIZATION=_basic("alice", "alice-password-1")
    )
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert "only creates and lists tokens" in response.json()["detail"]
    assert AuthToken.objects.filter(pk=record.pk).exists()


def test_no_credentials_at_all_are_still_not_provided() -> None:
    response = APIClient().delete("/api/tokens/uno_abcdef/")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_a_deactivated_users_token_is_refused(alice: Any) -> None:
    _, key = token_create(user=alice)
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert _status_with(key, "/api/tokens/") == 401


def test_a_token_that_expires_later_works_and_brings_its_whole_user(alice: Any) -> None:
    record, key = token_create(user=alice, expires_in=60)
    found = tokens_with_users(record.token_key)
    assert [token.pk for token in found] == [record.pk]
    assert found[0].expiry == AuthToken.objects.get(pk=record.pk).expiry  # aware, as the ORM's
    assert found[0].user == alice and found[0].user.username == alice.username
    assert found[0].user.password == alice.password  # every field loaded, none deferred
    assert _status_with(key, "/api/tokens/") == 200


def test_of_two_tokens_sharing_a_key_prefix_each_key_finds_its_own(
    alice: Any, bob: Any
) -> None:
    alice_token, alice_key = token_create(user=alice)
    bob_key = alice_key[: CONSTANTS.TOKEN_KEY_LENGTH] + "0" * (
        len(alice_key) - CONSTANTS.TOKEN_KEY_LENGTH
    )  # a collision on the stored prefix, made by hand: knox keeps trying the candidates
    AuthToken(user=bob, token_key=alice_token.token_key, digest=hash_token(bob_key)).save()
    assert len(tokens_with_users(alice_token.token_key)) == 2
    for key, user in ((alice_key, alice), (bob_key, bob)):
        found_user, token = TokenAuthentication().authenticate_credentials(key.encode())
        assert found_user == user and token.user == user


@pytest.mark.postgres
def test_on_postgresql_the_token_lookup_is_a_prepared_statement(alice: Any) -> None:
    """Every authenticated request runs it: planned once per connection, not per request
    (planning was eight times its execution)."""
    from django.db import connection

    record, key = token_create(user=alice, expires_in=60)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    found = tokens_with_users(record.token_key)
    assert [token.pk for token in found] == [record.pk]
    assert found[0].expiry == AuthToken.objects.get(pk=record.pk).expiry  # aware, as the ORM's
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [statement for (statement,) in cursor.fetchall()]
    assert any('FROM "knox_authtoken"' in s for s in statements), statements
    assert _status_with(key, "/api/tokens/") == 200


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_column_type_changed_by_a_migration_does_not_break_the_prepared_token_lookup(
    alice: Any,
) -> None:
    """PostgreSQL refuses a prepared statement whose result columns changed type ("cached
    plan must not change result type"): the lookup is prepared again, not failed (a request
    authenticates outside any transaction)."""
    import psycopg
    from django.db import connection

    record, key = token_create(user=alice)
    assert _status_with(key, "/api/tokens/") == 200  # prepared on this connection
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as other:  # a migration, elsewhere
        other.execute("ALTER TABLE knox_authtoken ALTER COLUMN token_key TYPE text")
        try:
            assert [t.pk for t in tokens_with_users(record.token_key)] == [record.pk]
            assert _status_with(key, "/api/tokens/") == 200
        finally:
            other.execute(
                "ALTER TABLE knox_authtoken ALTER COLUMN token_key TYPE varchar(25)")


@pytest.mark.postgres
def test_the_token_lookup_is_not_prepared_with_prepared_statements_off(
    alice: Any, settings: Any
) -> None:
    """For a pooler in transaction mode without prepared statement support."""
    from django.db import connection

    settings.DB_PREPARED_STATEMENTS = False
    record, key = token_create(user=alice)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    assert [token.pk for token in tokens_with_users(record.token_key)] == [record.pk]
    assert _status_with(key, "/api/tokens/") == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone() == (0,)


@pytest.mark.postgres
def test_query_logging_records_the_prepared_token_lookups_sql(alice: Any) -> None:
    """As Django logs its own queries (``connection.queries``, tests counting queries): the
    preparing cursor's statements were logged as ``None``."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    record, _ = token_create(user=alice)
    with CaptureQueriesContext(connection) as captured:
        tokens_with_users(record.token_key)
    (query,) = captured.captured_queries
    assert 'FROM "knox_authtoken"' in query["sql"] and record.token_key in query["sql"]
