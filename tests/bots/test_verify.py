"""Verification over real HTTP: the signature handshake and a validation game against a
reference player. Only a bot that checks signatures and answers every turn legally passes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bots import services as bot_services
from bots import signing
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


def _checks_everything(secret: str, headers: dict[str, str], raw: bytes) -> None:
    signing.verify(secret, headers, raw)


def _trusts_unsigned_calls(secret: str, headers: dict[str, str], raw: bytes) -> None:
    """A bot's mistake: it checks a signature only when the call carries one."""
    if any(name.lower() == "webhook-signature" for name in headers):
        signing.verify(secret, headers, raw)


def _ignores_the_timestamp(secret: str, headers: dict[str, str], raw: bytes) -> None:
    """A bot's mistake: a signature is checked, its age never (a replayed call passes)."""
    signing.verify(secret, headers, raw, tolerance=10**12)


class _RecordingBot:
    """A stdlib bot on 127.0.0.1 that checks signatures (``check`` raises ``SignatureError``
    for a call it refuses with 401), keeps every body it accepts, and plays its first legal
    move (``beside``: other top-level keys of its answer)."""

    def __init__(self, secret: str,
                 check: Callable[[str, dict[str, str], bytes], None] = _checks_everything,
                 beside: dict[str, Any] | None = None) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.bodies: list[dict[str, Any]] = []
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    check(secret, dict(self.headers), raw)
                except signing.SignatureError:
                    return self._answer(401, b"")
                body = json.loads(raw)
                bodies.append(body)
                if body["type"] != "turn":
                    return self._answer(204, b"")
                answer = {**(beside or {}), "move": body["legal_moves"][0]}
                self._answer(200, json.dumps(answer).encode())

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
    assert not result["verified"] and result["turns"] == 0
    # Each refusal check failed, each named with what the bot answered.
    wrong_secret, unsigned, stale = result["reasons"]
    assert wrong_secret.startswith("A notice signed with a wrong secret got 200:")
    assert unsigned.startswith("A notice with no webhook-id, webhook-timestamp or "
                               "webhook-signature header got 200:")
    assert stale.startswith("A notice correctly signed but with a webhook-timestamp 10 "
                            "minutes old got 200:")
    bot.refresh_from_db()
    assert not bot.verified and bot.verification["result"] == "failed"


def test_the_handshake_sends_a_signed_a_forged_an_unsigned_and_a_stale_notice(
    alice: Any,
) -> None:
    from bots import verify

    with FaultServer(mode="ok") as fault:  # accepts everything: no game follows the handshake
        bot, secret = register(alice, "doorman", fault.url)
        verify.verify(bot_id=bot.pk)
        signed, forged, unsigned, stale = fault.requests
    assert {request.body for request in fault.requests} == {signed.body}  # the start notice
    assert signed.json()["type"] == "start"
    signing.verify(secret, signed.headers, signed.body)
    with pytest.raises(signing.SignatureError, match="no webhook-signature entry"):
        signing.verify(secret, forged.headers, forged.body)
    assert not {"webhook-id", "webhook-timestamp", "webhook-signature"} & set(unsigned.headers)
    with pytest.raises(signing.SignatureError, match="more than 300 s"):
        signing.verify(secret, stale.headers, stale.body)
    age = int(signed.headers["webhook-timestamp"]) - int(stale.headers["webhook-timestamp"])
    assert age == pytest.approx(verify.STALE_SECONDS, abs=2)
    # Signed with the bot's secret at that time: only its age is wrong.
    signing.verify(secret, stale.headers, stale.body,
                   now=int(stale.headers["webhook-timestamp"]))


def _verified_by_recording_bot(owner: Any, name: str,
                               check: Callable[[str, dict[str, str], bytes], None]) -> Any:
    from bots import verify

    bot, secret = register(owner, name, "http://127.0.0.1:9/")
    recorder = _RecordingBot(secret, check)
    try:
        bot_services.bot_update(bot=bot, data={"url": recorder.url})
        return verify.verify(bot_id=bot.pk, seed=8)
    finally:
        recorder.close()


def test_it_refuses_to_verify_a_bot_that_accepts_an_unsigned_call(alice: Any) -> None:
    result = _verified_by_recording_bot(alice, "credulous", _trusts_unsigned_calls)
    assert not result["verified"] and result["turns"] == 0
    assert result["reasons"] == [
        "A notice with no webhook-id, webhook-timestamp or webhook-signature header got 204: "
        "the bot must check that a call carries its signature headers and refuse it with a "
        "4xx (401)."]


def test_it_refuses_to_verify_a_bot_that_accepts_a_stale_timestamp(alice: Any) -> None:
    result = _verified_by_recording_bot(alice, "replayable", _ignores_the_timestamp)
    assert not result["verified"] and result["turns"] == 0
    assert result["reasons"] == [
        "A notice correctly signed but with a webhook-timestamp 10 minutes old got 204: the "
        "bot must check webhook-timestamp (more than 5 minutes off its clock: a replayed "
        "call) and refuse it with a 4xx (401)."]


def test_a_bot_that_checks_everything_passes_the_same_handshake(alice: Any) -> None:
    result = _verified_by_recording_bot(alice, "careful", _checks_everything)
    assert result["verified"] and result["reasons"] == []


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


def test_a_move_with_a_key_it_does_not_know_is_a_malformed_answer(alice: Any) -> None:
    bot, secret = register(alice, "chatty", "http://127.0.0.1:9/")

    def explain(view: dict[str, Any], rng: Any) -> dict[str, Any]:
        return {**view["legal_moves"][0], "why": "the first one"}

    result = _verified_while_served(alice, bot, secret, explain)
    assert not result["verified"]
    assert "Turn 1: malformed (unknown move field 'why')." in result["reasons"]


def test_the_answers_other_top_level_keys_are_ignored(alice: Any) -> None:
    from bots import verify

    bot, secret = register(alice, "annotated", "http://127.0.0.1:9/")
    recorder = _RecordingBot(secret, beside={"why": "the first one", "think_ms": 3})
    try:
        bot_services.bot_update(bot=bot, data={"url": recorder.url})
        result = verify.verify(bot_id=bot.pk, seed=8)
    finally:
        recorder.close()
    assert result["verified"], result


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


def test_a_verifications_notices_and_game_fit_within_the_proxys_60_seconds() -> None:
    from bots import runner, verify

    notices = 1 + len(verify.REFUSALS) + 1  # the signed one, the refusals, the end notice
    # deploy/nginx.conf.template: proxy_read_timeout 60s for the API.
    assert notices * runner.NOTICE_TIMEOUT_SECONDS + verify.GAME_SECONDS < 60


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


def _docs_minimal_bot(secret: str, port: int) -> str:
    """docs/bot-protocol.md's minimal bot as written, with this secret and port."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "bot-protocol.md").read_text()
    section = doc[doc.index("## A minimal bot"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    assert '"whsec_..."' in code and "port=9001" in code
    return code.replace('"whsec_..."', repr(secret)).replace("port=9001", f"port={port}")


def test_the_docs_minimal_bot_passes_verification_as_written(alice: Any, tmp_path: Any) -> None:
    import socket
    import subprocess
    import sys
    import time

    from bots import verify

    bot, secret = register(alice, "minimal", "http://127.0.0.1:9/")
    with socket.socket() as probe:  # a free port for it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "minimal_bot.py"
    script.write_text(_docs_minimal_bot(secret, port))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:  # until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "did not start"
                time.sleep(0.1)
        bot_services.bot_update(bot=bot, data={"url": f"http://127.0.0.1:{port}/"})
        result = verify.verify(bot_id=bot.pk, seed=8)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert result["verified"], result
