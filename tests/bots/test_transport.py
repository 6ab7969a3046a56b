"""The bot transport against real misbehaving servers on 127.0.0.1 (tests/bots/fault_server.py).

Every fault must come back as a ``CallResult`` with the right error kind, and the call must
return (no timing assertions: the deadlines are short so a hung call would hang the test).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bots import signing
from bots.transport import ERROR_KINDS, BotTransport, CallResult
from tests.bots.conftest import ALICE_SECRET
from tests.bots.fault_server import METADATA_URL, FaultServer

LEGAL = [{"type": "play", "card": "R5"}, {"type": "draw"}]
TURN = {"protocol": 1, "type": "turn", "game": 7, "version": 3, "seat": 0, "legal_moves": LEGAL}
SHORT = 0.5  # seconds: the deadline for calls that are meant to run out of time


def call(transport: BotTransport, url: str, timeout: float = 2.0) -> CallResult:
    result = transport.post_sync(url, TURN, secrets=[ALICE_SECRET], timeout=timeout)
    assert result.latency_ms >= 0
    assert result.error is None or result.error in ERROR_KINDS
    assert result.ok == (result.error is None)
    if not result.ok:
        assert result.body is None and result.detail
    return result


# -- answers that reach us ---------------------------------------------------------------------


def test_it_returns_the_bots_json_answer(transport: BotTransport, fault_bot: FaultServer) -> None:
    result = call(transport, fault_bot.url)
    assert result.ok and result.status == 200 and result.error is None
    assert result.body == {"move": LEGAL[0]}
    assert result.latency_ms > 0


def test_every_call_is_signed_json_with_our_user_agent(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    rotated = signing.new_secret()
    for _ in range(2):
        transport.post_sync(fault_bot.url, TURN, secrets=[ALICE_SECRET, rotated], timeout=2)
    first, second = fault_bot.requests
    for request in (first, second):
        assert request.method == "POST"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["user-agent"].startswith("UnoArena/")
        assert "(bot-protocol 1)" in request.headers["user-agent"]
        assert request.json() == TURN
        signing.verify(ALICE_SECRET, request.headers, request.body)
        signing.verify(rotated, request.headers, request.body)
    assert first.headers["webhook-id"] != second.headers["webhook-id"]


def test_sequential_calls_reuse_one_kept_alive_connection(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    for _ in range(5):
        assert call(transport, fault_bot.url).ok
    assert fault_bot.connections == 1


def test_an_empty_2xx_answer_is_ok_with_no_body(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    result = call(transport, fault_bot.url_for("empty"))
    assert result.ok and result.status == 204 and result.body is None


@pytest.mark.parametrize(
    ("mode", "body"),
    [
        ("malformed_move", {"move": "draw please"}),
        ("illegal_move", {"move": {"type": "play", "card": "ZZ"}}),
        ("no_move", {}),
    ],
)
def test_a_bad_move_is_delivered_for_the_runner_to_judge(
    transport: BotTransport, fault_bot: FaultServer, mode: str, body: Any
) -> None:
    result = call(transport, fault_bot.url_for(mode))
    assert result.ok and result.body == body


def test_a_body_exactly_at_the_cap_is_read_and_one_byte_more_is_too_large(
    fault_bot: FaultServer,
) -> None:
    size = len(json.dumps({"move": LEGAL[0]}).encode())
    at_cap, under_cap = (
        BotTransport(allow_private=True, max_body=size),
        BotTransport(allow_private=True, max_body=size - 1),
    )
    try:
        assert call(at_cap, fault_bot.url).ok
        assert call(under_cap, fault_bot.url).error == "too_large"
    finally:
        at_cap.close()
        under_cap.close()


def test_a_header_that_never_ends_is_cut_at_the_head_cap_not_buffered(
    transport: BotTransport, fault_bot: FaultServer,
) -> None:
    # httptools keeps an unfinished header value without a limit: before the cap, a bot that
    # sent one grew the worker by the megabytes it sent within the call's budget.
    result = call(transport, fault_bot.url_for("header_flood"))
    assert result.error == "too_large" and "headers" in result.detail


# -- faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("slow", "timeout"),  # answers after 3 s
        ("drip", "timeout"),  # a byte every 50 ms: each read is quick, the whole call is not
        ("hang", "timeout"),
        ("reset", "reset"),
        ("hangup", "reset"),
        ("garbage", "reset"),
        ("status", "status"),
        ("status/404", "status"),
        ("status/503", "status"),
        ("redirect", "redirect"),
        ("redirect/301", "redirect"),
        ("redirect/307", "redirect"),
        ("redirect/308", "redirect"),
        ("not_json", "not_json"),
        ("deep_json", "not_json"),
        ("nan_json", "not_json"),  # strict JSON: NaN and Infinity are not JSON
        ("twice_move", "not_json"),  # a key given twice, refused as the API refuses it
        ("huge", "too_large"),  # 10 MB announced
        ("huge_chunked", "too_large"),  # 10 MB, no length announced: read up to the cap only
        ("status_huge", "status"),  # what the status says comes first: nothing is read
        ("until_reset", "reset"),  # a body ended by the connection's reset, not its close
    ],
)
def test_each_fault_is_the_right_error_kind(
    transport: BotTransport, fault_bot: FaultServer, mode: str, kind: str
) -> None:
    result = call(transport, fault_bot.url_for(mode), timeout=SHORT)
    assert (result.error, result.ok) == (kind, False), result.detail


@pytest.mark.parametrize("mode", ["until_close", "continue"])
def test_an_answer_in_an_older_or_interim_form_is_read(
    transport: BotTransport, fault_bot: FaultServer, mode: str
) -> None:
    result = call(transport, fault_bot.url_for(mode))
    assert result.ok and result.body == {"move": LEGAL[0]}, result.detail


@pytest.mark.parametrize(
    ("mode", "pause", "calls"),
    [
        # The bot's keep-alive is shorter than ours: it closes the pooled connection while it
        # is idle; the pool sees it closed and the next call dials a new one.
        ("close_idle", 0.2, 2),
        # The bot closes the pooled connection just as the next call goes out on it: nothing
        # of an answer came, so the call is sent once more on a new one (the bot saw it twice).
        ("close_crossing", 0.0, 3),
    ],
)
def test_a_pooled_connection_the_bot_closed_is_replaced_without_a_failure(
    transport: BotTransport, fault_bot: FaultServer, mode: str, pause: float, calls: int
) -> None:
    assert call(transport, fault_bot.url_for(mode)).ok
    time.sleep(pause)
    again = call(transport, fault_bot.url_for(mode))
    assert again.ok, again.detail
    assert (fault_bot.connections, fault_bot.calls) == (2, calls)


def test_it_sends_a_call_the_bots_close_crossed_again_with_the_same_webhook_id_and_bytes(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    assert call(transport, fault_bot.url_for("close_crossing")).ok
    assert call(transport, fault_bot.url_for("close_crossing")).ok
    first, crossed, resent = fault_bot.requests
    # The bot received the crossed request: the one sent again is the same signed call, so a
    # bot de-duplicating on webhook-id answers it once.
    assert crossed.body == resent.body and crossed.headers == resent.headers
    assert crossed.headers["webhook-id"] != first.headers["webhook-id"]


def test_a_bot_that_hangs_up_on_a_fresh_connection_is_not_called_again(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    assert call(transport, fault_bot.url_for("hangup")).error == "reset"
    assert fault_bot.calls == 1


def test_a_reply_just_inside_the_deadline_is_taken(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    result = call(transport, fault_bot.url_for("slow/0.05"), timeout=5)
    assert result.ok and result.body == {"move": LEGAL[0]}


def test_a_refused_connection_is_a_connect_error(transport: BotTransport, refused: str) -> None:
    result = call(transport, refused)
    assert result.error == "connect" and result.status is None


def test_a_bot_restarting_on_its_port_is_dialled_again_within_the_call(
    transport: BotTransport,
) -> None:
    """It answered a moment ago and now refuses: a restart. The call waits for it (within its
    deadline) instead of striking the bot for every decision while nobody listens."""
    first = FaultServer().start()
    port = first.port
    assert call(transport, first.url).ok
    first.stop()
    back = FaultServer(bind_port=port)
    restart = threading.Timer(0.3, back.start)
    restart.start()
    try:
        result = call(transport, f"http://127.0.0.1:{port}/", timeout=5)
        assert result.ok and back.calls == 1
    finally:
        restart.join()
        back.stop()


def test_a_bot_that_stays_down_is_a_connect_error_once_the_call_runs_out(
    transport: BotTransport,
) -> None:
    first = FaultServer().start()
    assert call(transport, first.url).ok
    first.stop()
    result = call(transport, first.url, timeout=SHORT)
    assert result.error == "connect" and "dialled again" in result.detail


def test_a_bot_never_answered_that_refuses_is_dialled_once(
    transport: BotTransport, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead bot stays cheap: no waiting on an address that never answered."""
    dials: list[Any] = []
    dial = transport._dial

    async def counted(target: Any) -> Any:
        dials.append(target)
        return await dial(target)

    monkeypatch.setattr(transport, "_dial", counted)
    result = call(transport, refused, timeout=5)
    assert result.error == "connect" and len(dials) == 1


def test_a_name_that_does_not_resolve_is_a_connect_error(transport: BotTransport) -> None:
    assert call(transport, "http://no-such-bot.invalid/").error == "connect"


def test_a_redirect_to_the_metadata_address_is_never_followed(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    result = call(transport, fault_bot.url_for("redirect"))
    assert result.error == "redirect" and result.status == 302
    assert METADATA_URL in result.detail
    assert fault_bot.calls == 1


def test_a_bot_failing_every_other_call_fails_exactly_those(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    errors = [call(transport, fault_bot.url_for("flaky")).error for _ in range(4)]
    assert errors == [None, "status", None, "status"]


def test_a_call_after_a_timed_out_one_gets_a_fresh_answer(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    assert call(transport, fault_bot.url_for("hang"), timeout=SHORT).error == "timeout"
    after = call(transport, fault_bot.url)
    assert after.ok and after.body == {"move": LEGAL[0]}


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 0, -1])
def test_a_nonsense_timeout_still_ends_the_call(fault_bot: FaultServer, timeout: float) -> None:
    capped = BotTransport(allow_private=True, max_timeout=SHORT)
    try:
        assert call(capped, fault_bot.url_for("hang"), timeout=timeout).error == "timeout"
    finally:
        capped.close()


def test_the_timeout_is_capped_by_the_maximum(fault_bot: FaultServer) -> None:
    capped = BotTransport(allow_private=True, max_timeout=SHORT)
    try:
        assert call(capped, fault_bot.url_for("hang"), timeout=3600).error == "timeout"
    finally:
        capped.close()


# -- refusals before any connection ----------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "2130706433",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
    ],
)
def test_without_allow_private_a_loopback_bot_is_blocked_and_never_called(
    guarded_transport: BotTransport, fault_bot: FaultServer, host: str
) -> None:
    result = call(guarded_transport, f"http://{host}:{fault_bot.port}/")
    assert result.error == "blocked_address", result.detail
    assert fault_bot.calls == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://0xa9fea9fe/",
        "http://100.64.0.1/",
        "http://0.0.0.0:80/",
        "http://[::]:80/",
        "http://224.0.0.1/",
        "http://1.2.3.4.5/",  # looks numeric to aiohttp (no DNS), is no address: refused
        "http://[fe80::1%25eth0]/",
    ],
)
def test_special_addresses_are_blocked_even_with_allow_private(
    transport: BotTransport, url: str
) -> None:
    assert call(transport, url).error == "blocked_address"


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/", "http://alice:pw@127.0.0.1/", "http://127.0.0.1/#x", "not a url", ""],
)
def test_a_bad_url_is_refused_before_any_connection(transport: BotTransport, url: str) -> None:
    assert call(transport, url).error == "bad_url"


# -- async callers ----------------------------------------------------------------------------


def test_concurrent_async_calls_all_complete(fault_bot: FaultServer) -> None:
    async def run() -> list[CallResult]:
        bots = BotTransport(allow_private=True)
        try:
            urls = (
                [fault_bot.url] * 12
                + [fault_bot.url_for("hang")] * 2
                + [fault_bot.url_for("status")] * 2
            )
            return await asyncio.gather(
                *(bots.post(url, TURN, secrets=[ALICE_SECRET], timeout=SHORT) for url in urls)
            )
        finally:
            await bots.aclose()

    results = asyncio.run(run())
    assert [r.error for r in results] == [None] * 12 + ["timeout"] * 2 + ["status"] * 2


def _call_in_child(transport: BotTransport, url: str, answers: Any) -> None:
    result = transport.post_sync(url, TURN, secrets=[ALICE_SECRET], timeout=2)
    answers.put((result.error, result.body))


def test_a_forked_worker_calls_on_a_loop_of_its_own(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    """Celery's prefork pool forks after the parent may have used the transport: the child
    must not wait on the parent's loop thread, which does not exist in the child."""
    import multiprocessing

    assert call(transport, fault_bot.url).ok  # the parent's loop thread is running now
    fork = multiprocessing.get_context("fork")
    answers = fork.Queue()
    child = fork.Process(target=_call_in_child, args=(transport, fault_bot.url, answers))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert answers.get(timeout=5) == (None, {"move": LEGAL[0]})


def test_the_host_header_keeps_the_name_while_the_checked_address_is_dialled(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    assert call(transport, f"http://localhost:{fault_bot.port}/").ok
    assert fault_bot.requests[0].headers["host"] == f"localhost:{fault_bot.port}"


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    return key, cert


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_an_https_bot_with_an_untrusted_certificate_is_not_called(
    transport: BotTransport, tmp_path: Path
) -> None:
    key, cert = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with FaultServer(tls=context) as bot:
        result = call(transport, f"https://localhost:{bot.port}/")
        assert result.error == "connect" and "certificate" in result.detail.lower()
        assert bot.calls == 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_an_https_bot_with_a_trusted_certificate_is_called_by_its_name(tmp_path: Path) -> None:
    key, cert = _self_signed(tmp_path)
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    bots = BotTransport(allow_private=True, tls=trusting)
    try:
        with FaultServer(tls=serving) as bot:
            for _ in range(2):
                result = call(bots, f"https://localhost:{bot.port}/")
                assert result.ok and result.body == {"move": LEGAL[0]}, result.detail
            assert bot.connections == 1  # kept alive over TLS too
            assert bot.requests[0].headers["host"] == f"localhost:{bot.port}"
            # The name is what the certificate is checked against: the bare address is not it.
            assert call(bots, f"https://127.0.0.1:{bot.port}/").error == "connect"
    finally:
        bots.close()


def test_a_connection_idle_past_the_keep_alive_is_not_reused(
    fault_bot: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bots import transport as transport_module

    monkeypatch.setattr(transport_module, "_KEEPALIVE_SECONDS", 0.05)
    short = BotTransport(allow_private=True)
    try:
        assert call(short, fault_bot.url).ok
        time.sleep(0.1)
        assert call(short, fault_bot.url).ok
    finally:
        short.close()
    assert fault_bot.connections == 2


def test_a_name_whose_dns_never_answers_takes_one_lookup_thread_not_one_a_call(
    transport: BotTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bot owner's choice of name must not starve other bots of lookup threads: calls to one
    # name share its lookup, and a failed name is not looked up again for a few seconds.
    real = socket.getaddrinfo
    lookups: list[str] = []

    def slow_dns(host: str, *args: Any, **kwargs: Any) -> Any:
        if host != "slow.example":
            return real(host, *args, **kwargs)
        lookups.append(host)
        time.sleep(0.5)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", slow_dns)
    url = "http://slow.example/"
    calls = [transport.post_future(url, TURN, secrets=[ALICE_SECRET], timeout=0.2)
             for _ in range(16)]
    assert {transport.result(c, timeout=5).error for c in calls} == {"timeout"}
    assert len(lookups) == 1
    time.sleep(0.5)  # the lookup fails: remembered
    again = [transport.post_sync(url, TURN, secrets=[ALICE_SECRET], timeout=0.2)
             for _ in range(3)]
    assert {r.error for r in again} == {"connect"} and len(lookups) == 1
    assert all("does not resolve" in r.detail for r in again)


@pytest.mark.parametrize(
    ("body", "repeated"),
    [
        (b'{"move": {"type": "draw"}, "move": {"type": "keep"}}', "move"),
        (b'{"move": {"type": "play", "card": "R5", "card": "G5"}}', "card"),
        (b'[{"a": 1}, {"b": {"c": 2, "c": 3}}]', "c"),
    ],
)
def test_it_refuses_an_answer_that_gives_a_key_twice(body: bytes, repeated: str) -> None:
    from bots.transport import _parse_json

    parsed, value, problem = _parse_json(body)
    assert (parsed, value) == (False, None) and f"key {repeated!r} twice" in problem


def test_it_takes_colons_inside_strings_for_what_they_are() -> None:
    from bots.transport import _parse_json

    body = b'{"move": {"type": "draw"}, "note": "at 12:30:01", "k:ey": "{\\"a\\": 1}"}'
    assert _parse_json(body) == (True, {"move": {"type": "draw"}, "note": "at 12:30:01",
                                        "k:ey": '{"a": 1}'}, "")


def test_a_401_answer_says_the_bot_probably_refused_the_signature(
    transport: BotTransport, fault_bot: FaultServer
) -> None:
    result = call(transport, fault_bot.url_for("status/401"))
    assert result.error == "status" and result.status == 401
    assert "signature" in result.detail and "secret" in result.detail
