"""Registering bots and who may do what with them: alice owns bots, bob plays at her tables,
charlie is anyone else signed in. Everyone signed in sees a bot's public profile; only its
owner sees its URL, stats and call log, changes it, rotates its secret or seats it."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from bots import services as bot_services
from bots.models import Bot
from bots.serve import serve_in_thread
from bots.transport import BotTransport
from tests.arena.test_schema_examples import examples_of, operation, validator
from tests.bots.helpers import register
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db
URL = "https://bots.example.org/uno"


@pytest.fixture(autouse=True)
def _no_background_bots(settings: Any) -> None:
    settings.BOTS_RUNNER = "off"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice_api(alice: Any) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob: Any) -> APIClient:
    return client_for(bob)


@pytest.fixture
def charlie_api(charlie: Any) -> APIClient:
    return client_for(charlie)


def _create(client: APIClient, **body: Any) -> Any:
    return client.post("/api/bots/", {"name": "greedy-1", "url": URL, **body}, format="json")


def test_alice_registers_a_bot_and_gets_its_secret_only_once(alice_api: APIClient) -> None:
    created = _create(alice_api, description="Plays high.")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["secret"].startswith("whsec_") and body["owner"] == "alice"
    assert body["url"] == URL and body["enabled"] and not body["verified"]
    again = alice_api.get(f"/api/bots/{body['id']}/").json()
    assert "secret" not in again and again["url"] == URL
    assert body["secret"] not in alice_api.get("/api/bots/").content.decode()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "https://user:pw@bots.example.org/"}, "url"),
        ({"url": "https://bots.example.org/#frag"}, "url"),
        ({"url": "ftp://bots.example.org/"}, "url"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "https://bots.example.org/" + "a" * 2000}, "url"),
        ({"url": "not a url"}, "url"),
        # IPs no setting lets a bot call: the metadata service, unspecified, multicast.
        ({"url": "http://169.254.169.254/latest/meta-data/"}, "url"),
        ({"url": "http://0.0.0.0:8000/"}, "url"),
        ({"url": "http://[ff02::1]/"}, "url"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "has space"}, "name"),
        ({"name": "bot:x"}, "name"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_it_rejects_bad_input_with_a_400_naming_the_field(
    alice_api: APIClient, body: dict[str, Any], field: str
) -> None:
    response = _create(alice_api, **body)
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert not Bot.objects.exists()


def test_with_https_required_a_plain_http_url_is_refused_at_registration_and_change(
    alice_api: APIClient, settings: Any
) -> None:
    """Production's default, unless private addresses are allowed: over plain http anyone on
    the way reads the bot's hand and can answer in its place."""
    settings.BOTS_REQUIRE_HTTPS = True
    refused = _create(alice_api, url="http://bots.example.org/uno")
    assert refused.status_code == 400
    assert "https://" in refused.json()["fields"]["url"][0]
    created = _create(alice_api)  # https
    assert created.status_code == 201, created.content
    changed = alice_api.patch(f"/api/bots/{created.json()['id']}/",
                              {"url": "HTTP://bots.example.org/other"}, format="json")
    assert changed.status_code == 400 and "url" in changed.json()["fields"]
    assert Bot.objects.get().url == URL


def test_it_rejects_a_duplicate_name_in_any_case(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    assert _create(alice_api).status_code == 201
    clash = _create(bob_api, name="GREEDY-1")
    assert clash.status_code == 400 and clash.json()["fields"]["name"]


def test_a_name_taken_between_the_check_and_the_insert_is_a_400_too(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(alice, "racer", URL)
    monkeypatch.setattr(bot_services, "_name_free", lambda name, exclude=None: None)
    with pytest.raises(Exception) as raised:
        bot_services.bot_create(owner=alice, name="RACER", url=URL)
    assert getattr(raised.value, "status_code", None) == 400
    assert Bot.objects.count() == 1


def test_everyone_signed_in_sees_the_public_profile_only(
    alice_api: APIClient, charlie_api: APIClient
) -> None:
    bot_id = _create(alice_api).json()["id"]
    seen = charlie_api.get(f"/api/bots/{bot_id}/").json()
    assert set(seen) == {"id", "name", "owner", "description", "verified", "created_at"}
    listed = charlie_api.get("/api/bots/").json()["results"]
    assert [b["name"] for b in listed] == ["greedy-1"] and "url" not in listed[0]
    assert charlie_api.get("/api/bots/?mine=true").json()["results"] == []
    assert APIClient().get(f"/api/bots/{bot_id}/").status_code == 401


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("patch", "", {"description": "mine now"}),
        ("delete", "", None),
        ("post", "rotate-secret/", None),
        ("post", "verify/", None),
        ("get", "stats/", None),
        ("get", "calls/", None),
    ],
)
def test_only_the_owner_may_change_or_inspect_a_bot(
    alice_api: APIClient, bob_api: APIClient, method: str, suffix: str, body: Any
) -> None:
    bot_id = _create(alice_api).json()["id"]
    response = getattr(bob_api, method)(f"/api/bots/{bot_id}/{suffix}", body, format="json")
    assert response.status_code == 403 and response.json()["code"] == "not_bot_owner"
    assert Bot.objects.get(pk=bot_id).description == ""
    missing = getattr(bob_api, method)(f"/api/bots/99999/{suffix}", body, format="json")
    assert missing.status_code == 404


def test_changing_the_url_clears_the_verification(alice: Any, alice_api: APIClient) -> None:
    bot, _ = register(alice, "checked", URL)
    Bot.objects.filter(pk=bot.pk).update(verified=True)
    same = alice_api.patch(f"/api/bots/{bot.pk}/", {"url": URL}, format="json").json()
    assert same["verified"]
    moved = alice_api.patch(f"/api/bots/{bot.pk}/", {"url": URL + "/v2"}, format="json").json()
    assert not moved["verified"] and moved["verification"]["result"] == "cleared"


def test_a_rotated_secret_signs_with_both_until_the_grace_period_ends(
    alice: Any, alice_api: APIClient, settings: Any
) -> None:
    bot, old = register(alice, "rotor", URL)
    rotated = alice_api.post(f"/api/bots/{bot.pk}/rotate-secret/")
    assert rotated.status_code == 200
    new = rotated.json()["secret"]
    assert new != old and rotated.json()["previous_valid_until"]
    bot.refresh_from_db()
    assert bot_services.signing_secrets(bot) == [new, old]
    # A bot still configured with the old secret accepts the call meanwhile (real HTTP).
    url, stop = serve_in_thread("greedy", old)
    transport = BotTransport(allow_private=True)
    try:
        notice = {"protocol": 1, "type": "start", "game": 0, "version": 0, "seat": 0,
                  "options": {}, "players": []}
        both = transport.post_sync(url, notice, secrets=bot_services.signing_secrets(bot),
                                   timeout=5)
        only_new = transport.post_sync(url, notice, secrets=[new], timeout=5)
    finally:
        transport.close()
        stop()
    assert both.ok and only_new.status == 401
    settings.BOTS_SECRET_GRACE_HOURS = 0
    bot_services.bot_rotate_secret(bot=bot)
    bot.refresh_from_db()
    assert len(bot_services.signing_secrets(bot)) == 1


def _game(client: APIClient) -> int:
    created = client.post("/api/games/", {"seats": 3, "options": {"single_hand": True}},
                          format="json")
    assert created.status_code == 201
    return int(created.json()["id"])


def test_only_the_owner_may_seat_a_bot_and_only_an_enabled_one(
    alice: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    bot, _ = register(alice, "seated", URL)
    gid = _game(bob_api)
    stolen = bob_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json")
    assert stolen.status_code == 403 and stolen.json()["code"] == "not_bot_owner"
    missing = alice_api.post(f"/api/games/{gid}/join/", {"bot": 99999}, format="json")
    assert missing.status_code == 400 and "bot" in missing.json()["fields"]
    Bot.objects.filter(pk=bot.pk).update(enabled=False)
    disabled = alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json")
    assert disabled.status_code == 409 and disabled.json()["code"] == "bot_disabled"
    Bot.objects.filter(pk=bot.pk).update(enabled=True)
    seated = alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json")
    assert seated.status_code == 200, seated.content
    assert [s["player"] for s in seated.json()["seats"]] == ["bob", "bot:seated", None]
    assert seated.json()["my_seat"] is None  # the bot plays that seat, not alice
    twice = alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json")
    assert twice.status_code == 409 and twice.json()["code"] == "already_seated"
    # Alice may sit at the same table herself: the bot is its own player.
    assert alice_api.post(f"/api/games/{gid}/join/").status_code == 200
    assert alice_api.get(f"/api/games/{gid}/").json()["open_seats"] == 0
    # A seated bot cannot be deleted (its games keep their history); it can be taken off.
    assert alice_api.delete(f"/api/bots/{bot.pk}/").json()["code"] == "bot_seated"
    off = alice_api.post(f"/api/games/{gid}/leave/", {"bot": bot.pk}, format="json")
    assert off.status_code == 200 and off.json()["seats"][1]["player"] is None


def test_the_owner_sees_latency_strikes_and_recent_calls(
    alice: Any, alice_api: APIClient
) -> None:
    bot, _ = register(alice, "measured", URL)
    for latency in (3.0, 5.0, 40.0):
        bot_services.call_record(bot_id=bot.pk, kind="turn", latency_ms=latency, status=200,
                                 outcome="move")
    bot_services.call_record(bot_id=bot.pk, kind="turn", latency_ms=1000.0, status=None,
                             error="timeout", outcome="strike", strike=True)
    stats = alice_api.get(f"/api/bots/{bot.pk}/stats/").json()
    assert stats["calls"] == 4 and stats["failed"] == 1
    assert stats["errors"] == {"timeout": 1} and stats["strikes"] == {"timeout": 1}
    assert stats["latency"] == {"p50_ms": 5.0, "p99_ms": 1000.0, "window": 4}
    calls = alice_api.get(f"/api/bots/{bot.pk}/calls/").json()["results"]
    assert [c["error"] for c in calls] == ["timeout", "", "", ""]


def test_the_owner_filters_the_call_log_by_game_kind_outcome_and_failure(
    alice: Any, alice_api: APIClient
) -> None:
    bot, _ = register(alice, "debugged", URL)
    first, second = _game(alice_api), _game(alice_api)
    record = bot_services.call_record
    record(bot_id=bot.pk, kind="start", latency_ms=1.0, status=204, game_id=first)
    record(bot_id=bot.pk, kind="turn", latency_ms=3.0, status=200, outcome="move",
           game_id=first, version=2, seat=1)
    record(bot_id=bot.pk, kind="turn", latency_ms=1000.0, status=None, error="timeout",
           outcome="strike", strike=True, game_id=second, version=5, seat=0)
    record(bot_id=bot.pk, kind="verify", latency_ms=2.0, status=200)

    def listed(query: str) -> list[tuple[str, str]]:
        response = alice_api.get(f"/api/bots/{bot.pk}/calls/?{query}")
        assert response.status_code == 200, response.content
        return [(c["kind"], c["outcome"]) for c in response.json()["results"]]

    assert listed(f"game={first}") == [("turn", "move"), ("start", "")]
    assert listed("kind=verify") == [("verify", "")]
    assert listed("outcome=strike") == [("turn", "strike")]
    assert listed("failed=true") == [("turn", "strike")]
    assert len(listed("failed=false")) == 3
    for bad in ("game=x", "kind=nap", "outcome=won", "failed=maybe", "game="):
        response = alice_api.get(f"/api/bots/{bot.pk}/calls/?{bad}")
        assert response.status_code == 400, (bad, response.content)


def test_the_call_log_is_pruned_but_the_aggregates_stay(alice: Any, settings: Any) -> None:
    bot, _ = register(alice, "chatty", URL)
    for _ in range(30):
        bot_services.call_record(bot_id=bot.pk, kind="turn", latency_ms=1.0, status=200)
    assert bot_services.call_log_prune(bot_id=bot.pk, keep=10) == 20
    assert bot.calls.count() == 10
    assert bot.counters.get(name="calls").count == 30


def test_a_loopback_ip_is_left_to_the_setting_at_each_call_not_refused_at_registration(
    alice_api: APIClient,
) -> None:
    assert _create(alice_api, url="http://127.0.0.1:8080/").status_code == 201


def test_someone_elses_bot_answers_what_the_schema_declares(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    # The schema declared the owner's shape (url, enabled, ... required): a client generated
    # from it failed on the answer to anyone else.
    bot = alice_api.post("/api/bots/", {"name": "alices", "url": "https://bots.example.org/a"},
                         format="json").json()
    check = validator({"$ref": "#/components/schemas/BotDetailOut"})
    theirs = bob_api.get(f"/api/bots/{bot['id']}/").json()
    assert "url" not in theirs
    check.validate(theirs)
    check.validate(alice_api.get(f"/api/bots/{bot['id']}/").json())


@pytest.mark.parametrize(("operation_id", "action"),
                         [("bots_rotate_secret", "rotate-secret/"), ("bots_verify", "verify/")])
def test_its_400_example_is_what_a_body_it_does_not_take_gets(
    alice: Any, alice_api: APIClient, operation_id: str, action: str
) -> None:
    """Not another operation's error (a table's options): these take no body at all."""
    bot, _ = register(alice, "bodyless", URL)
    (example,) = examples_of(operation(operation_id), "400")
    answer = alice_api.post(f"/api/bots/{bot.pk}/{action}", {"secret": "whsec_mine"},
                            format="json")
    assert answer.status_code == 400 and answer.json() == example


def test_a_second_rotation_drops_the_first_secret_at_once_within_its_grace_period(
    alice: Any, alice_api: APIClient
) -> None:
    bot, first = register(alice, "twice", URL)
    second = alice_api.post(f"/api/bots/{bot.pk}/rotate-secret/").json()["secret"]
    third = alice_api.post(f"/api/bots/{bot.pk}/rotate-secret/").json()["secret"]
    bot.refresh_from_db()
    assert bot_services.signing_secrets(bot) == [third, second]  # not first: 24 h or not
    assert first not in bot_services.signing_secrets(bot)
