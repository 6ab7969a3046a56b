"""Verification over real HTTP: the signature handshake and a validation game against a
reference player. Only a bot that checks signatures and answers every turn legally passes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bots import services as bot_services
from bots.models import Bot
from bots.serve import serve_in_thread
from tests.arena.test_schema_examples import validator
from tests.bots.fault_server import FaultServer
from tests.bots.helpers import close_default_transport, register
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db



@pytest.fixture(autouse=True)
def _fresh_default_transport() -> Iterator[None]:
    yield
    close_default_transport()

def _verified_while_served(owner: Any, bot: Bot, secret: str, strategy: Any) -> Any:
    """``bot`` served on 127.0.0.1 by ``strategy`` (``bots.serve``), verified over the API."""
    url, stop = serve_in_thread(strategy, secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        return client_for(owner).post(f"/api/bots/{bot.pk}/verify/").json()
    finally:
        stop()


@pytest.fixture(autouse=True)
def _quick(settings: Any) -> None:
    settings.BOTS_RUNNER = "off"
    settings.BOTS_TURN_TIMEOUT_MS = 500
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_a_reference_bot_passes_and_its_verification_is_recorded(alice: Any) -> None:
    bot, secret = register(alice, "honest", "http://127.0.0.1:9/")
    url, stop = serve_in_thread("greedy", secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        answer = client_for(alice).post(f"/api/bots/{bot.pk}/verify/")
    finally:
        stop()
    assert answer.status_code == 200, answer.content
    result = answer.json()
    assert result["verified"] and result["reasons"] == [] and result["turns"] > 0
    bot.refresh_from_db()
    assert bot.verified and bot.verification["result"] == "passed"
    # The signed start notice, every turn, and the end notice.
    assert bot.calls.filter(kind="verify", error="").count() == result["turns"] + 2


class _RecordingBot:
    """A stdlib bot on 127.0.0.1 that checks signatures, keeps every body it accepts, and
    plays its first legal move."""

    def __init__(self, secret: str) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from bots import signing

        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    signing.verify(secret, dict(self.headers), raw)
                except signing.SignatureError:
                    return self._answer(401, b"")
                body = json.loads(raw)
                bodies.append(body)
                if body["type"] != "turn":
                    return self._answer(204, b"")
                self._answer(200, json.dumps({"move": body["legal_moves"][0]}).encode())

            def _answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# The bot in seat 0, then in seat 1; games that end within the decisions asked (7 and 13).
@pytest.mark.parametrize("seed", [8, 11])
def test_the_validation_game_sends_the_bots_seat_in_its_start_notice_and_an_end_notice(
    alice: Any, seed: int
) -> None:
    from bots import verify
    from games.uno import replay

    bot, secret = register(alice, "recorder", "http://127.0.0.1:9/")
    recorder = _RecordingBot(secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": recorder.url})
        result = verify.verify(bot_id=bot.pk, seed=seed)
    finally:
        recorder.close()
    assert result["verified"], result
    start, *turns, end = recorder.bodies
    assert start["type"] == "start" and end["type"] == "end"
    assert {turn["type"] for turn in turns} == {"turn"} and len(turns) == result["turns"]
    assert {turn["seat"] for turn in turns} == {start["seat"]} == {end["seat"]} == {seed % 2}
    assert start["players"][start["seat"]] == bot.label
    # The end notice's replay rebuilds the game it reports.
    rebuilt = replay(end["replay"]["options"], end["replay"]["seed"], end["replay"]["moves"])
    assert rebuilt.finished and rebuilt.winner == end["result"]["winner"]
    # It is shaped as the replay endpoint's body, every deal and the final state included.
    validator({"$ref": "#/components/schemas/ReplayOut"}).validate(end["replay"])
    assert end["replay"]["deals"][0]["hands"] and end["replay"]["final"]["winner"] == (
        end["result"]["winner"])


def test_a_bot_nobody_answers_for_fails_as_unreachable(alice: Any) -> None:
    bot, _ = register(alice, "gone", "http://127.0.0.1:9/")  # the discard port: refused
    result = client_for(alice).post(f"/api/bots/{bot.pk}/verify/").json()
    assert not result["verified"]
    assert len(result["reasons"]) == 1 and result["reasons"][0].startswith(
        "Could not reach the bot at http://127.0.0.1:9/: connect")


def test_a_bot_that_accepts_forged_signatures_fails_with_the_reason(alice: Any) -> None:
    with FaultServer(mode="ok") as fault:  # answers anything, signed or not
        bot, _ = register(alice, "trusting", fault.url)
        result = client_for(alice).post(f"/api/bots/{bot.pk}/verify/").json()
    assert not result["verified"]
    assert any("wrong secret" in reason for reason in result["reasons"])
    bot.refresh_from_db()
    assert not bot.verified and bot.verification["result"] == "failed"


def test_a_bot_with_the_wrong_secret_fails_the_handshake(alice: Any) -> None:
    bot, _ = register(alice, "confused", "http://127.0.0.1:9/")
    url, stop = serve_in_thread("greedy", "whsec_" + "B" * 32)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        result = client_for(alice).post(f"/api/bots/{bot.pk}/verify/").json()
    finally:
        stop()
    assert not result["verified"]
    assert "correctly signed notice failed: status" in result["reasons"][0]


def test_a_bot_making_illegal_moves_fails_the_validation_game(alice: Any) -> None:
    bot, secret = register(alice, "cheater", "http://127.0.0.1:9/")

    def keep_always(view: dict[str, Any], rng: Any) -> dict[str, Any]:
        return {"type": "keep"}  # only legal right after drawing

    result = _verified_while_served(alice, bot, secret, keep_always)
    assert not result["verified"]
    assert any(": illegal (" in reason for reason in result["reasons"])
    assert not Bot.objects.get(pk=bot.pk).verified


def test_the_admin_action_verifies_too(admin_client: Any, alice: Any) -> None:
    bot, secret = register(alice, "via-admin", "http://127.0.0.1:9/")
    url, stop = serve_in_thread("greedy", secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        response = admin_client.post("/admin/bots/bot/", {
            "action": "verify_bots", "_selected_action": [bot.pk]}, follow=True)
    finally:
        stop()
    assert response.status_code == 200
    assert Bot.objects.get(pk=bot.pk).verified
    page = admin_client.get(f"/admin/bots/bot/{bot.pk}/change/")
    assert page.status_code == 200 and b"p50 / p99" in page.content




def test_a_users_second_verification_at_once_is_a_429_not_a_second_held_thread(
    alice: Any,
) -> None:
    from bots import verify

    bot, _ = register(alice, "busy", "http://127.0.0.1:9/")
    with verify.one_at_a_time(alice.pk):  # as if one of alice's verifications were running
        refused = client_for(alice).post(f"/api/bots/{bot.pk}/verify/")
    assert refused.status_code == 429 and refused.json()["code"] == "verification_running"
    assert int(refused["Retry-After"]) > 0
    assert client_for(alice).post(f"/api/bots/{bot.pk}/verify/").status_code == 200  # freed


def test_verifications_are_rate_limited_per_user(
    alice: Any, fresh_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"verify": "2/hour"})
    bot, _ = register(alice, "eager", "http://127.0.0.1:9/")
    api = client_for(alice)
    assert [api.post(f"/api/bots/{bot.pk}/verify/").status_code for _ in range(3)] == [
        200, 200, 429]


def test_the_validation_game_stops_failed_at_its_own_deadline(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bots import verify

    monkeypatch.setattr(verify, "time_limit", lambda **_: 0)  # as if the server had stalled
    bot, secret = register(alice, "dawdler", "http://127.0.0.1:9/")
    result = _verified_while_served(alice, bot, secret, "greedy")
    assert not result["verified"]
    assert any("took longer than 0 s" in reason for reason in result["reasons"])


def test_it_passes_a_bot_using_most_of_its_budget_after_the_decisions_asked_however_long_the_game(
    alice: Any, settings: Any
) -> None:
    import time

    from bots import verify

    settings.BOTS_TURN_TIMEOUT_MS = 400
    bot, secret = register(alice, "ponderer", "http://127.0.0.1:9/")

    def ponder(view: dict[str, Any], rng: Any) -> dict[str, Any]:
        time.sleep(0.26)  # 65% of its budget, every turn
        return view["legal_moves"][0]

    url, stop = serve_in_thread(ponder, secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        # Seed 10: played to its end, this game asks the bot 66 decisions (17 s of thinking).
        result = verify.verify(bot_id=bot.pk, seed=10)
    finally:
        stop()
    assert result["verified"], result
    assert result["turns"] == verify.DECISIONS
    end = bot.calls.filter(kind="verify").order_by("-id").first()
    assert end is not None and end.detail == "end notice" and end.error == ""


def test_a_verification_has_time_for_every_decision_it_asks_within_the_request() -> None:
    from bots import verify

    for budget in (1, 100, 500, 1000, 2000, 2500, 5000, 10_000):
        decisions = verify.decisions_for(budget)
        limit = verify.time_limit(decisions=decisions, budget_ms=budget)
        assert decisions * budget / 1000 < limit <= verify.GAME_SECONDS, budget
        assert decisions == verify.DECISIONS or budget > 2000


def test_a_cut_off_validation_game_ends_interrupted_without_a_replay(alice: Any) -> None:
    from bots import verify

    bot, secret = register(alice, "recorder", "http://127.0.0.1:9/")
    recorder = _RecordingBot(secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": recorder.url})
        result = verify.verify(bot_id=bot.pk, seed=10)  # 66 decisions to its end
    finally:
        recorder.close()
    assert result["verified"] and result["turns"] == verify.DECISIONS
    start, *turns, end = recorder.bodies
    assert start["type"] == "start" and len(turns) == verify.DECISIONS and end["type"] == "end"
    assert end["result"] == {"winner": None, "scores": [0, 0], "end_reason": "interrupted"}
    assert end["replay"] is None


def test_verifying_a_disabled_bot_is_a_409_that_keeps_its_verdict_and_costs_no_attempt(
    alice: Any, fresh_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"verify": "2/hour"})
    bot, secret = register(alice, "resting", "http://127.0.0.1:9/")
    api = client_for(alice)
    url, stop = serve_in_thread("greedy", secret)
    try:
        bot_services.bot_update(bot=bot, data={"url": url})
        assert api.post(f"/api/bots/{bot.pk}/verify/").json()["verified"]  # attempt 1
        passed = Bot.objects.get(pk=bot.pk).verification
        api.patch(f"/api/bots/{bot.pk}/", {"enabled": False}, format="json")
        for _ in range(3):
            refused = api.post(f"/api/bots/{bot.pk}/verify/")
            assert refused.status_code == 409 and refused.json()["code"] == "bot_disabled"
        after = Bot.objects.get(pk=bot.pk)
        assert after.verified and after.verification == passed  # the pass stands
        api.patch(f"/api/bots/{bot.pk}/", {"enabled": True}, format="json")
        assert api.post(f"/api/bots/{bot.pk}/verify/").status_code == 200  # attempt 2
        assert api.post(f"/api/bots/{bot.pk}/verify/").status_code == 429
    finally:
        stop()


def test_the_admin_action_leaves_a_disabled_bots_verdict_alone(
    admin_client: Any, alice: Any
) -> None:
    bot, _ = register(alice, "asleep", "http://127.0.0.1:9/")
    bot_services.bot_update(bot=bot, data={"enabled": False})
    response = admin_client.post("/admin/bots/bot/", {
        "action": "verify_bots", "_selected_action": [bot.pk]}, follow=True)
    assert response.status_code == 200 and b"enable it to verify it" in response.content
    assert Bot.objects.get(pk=bot.pk).verification == {}
