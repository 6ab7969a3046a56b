"""bots.serve: a strategy served over HTTP, called through the real transport (in a thread and
once as a real ``python -m bots.serve`` subprocess)."""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bots import signing
from bots.serve import serve_in_thread
from bots.transport import BotTransport
from games.uno import Options, legal_moves, new_game, view

ROOT = Path(__file__).resolve().parents[2]
BOB_SECRET = signing.new_secret()


def turn_payload(seed: int = 3) -> dict[str, Any]:
    state = new_game(Options(players=2), seed=seed)
    seat = state.awaiting
    seen = view(state, seat)
    return {
        "protocol": 1,
        "type": "turn",
        "game": 1,
        "version": 0,
        "seat": seat,
        "options": {"players": 2},
        "view": seen,
        "legal_moves": [m.to_json() for m in legal_moves(state, seat)],
        "budget_ms": 1000,
        "latency": {"p50_ms": None, "p99_ms": None},
    }


@pytest.fixture
def bob_bot() -> Iterator[str]:
    url, stop = serve_in_thread("greedy", BOB_SECRET, seed=1)
    yield url
    stop()


def test_it_answers_a_turn_with_one_of_the_legal_moves(
    transport: BotTransport, bob_bot: str
) -> None:
    payload = turn_payload()
    for _ in range(3):  # on one kept-alive connection
        result = transport.post_sync(bob_bot, payload, secrets=[BOB_SECRET], timeout=2)
        assert result.ok, result.detail
        assert result.body["move"] in payload["legal_moves"]


@pytest.mark.parametrize("kind", ["start", "end"])
def test_notices_get_an_empty_2xx(transport: BotTransport, bob_bot: str, kind: str) -> None:
    notice = {"protocol": 1, "type": kind, "game": 1, "version": 0, "seat": 0, "options": {}}
    result = transport.post_sync(bob_bot, notice, secrets=[BOB_SECRET], timeout=2)
    assert (result.ok, result.status, result.body) == (True, 204, None)


def test_it_refuses_a_call_signed_with_another_secret(
    transport: BotTransport, bob_bot: str
) -> None:
    result = transport.post_sync(bob_bot, turn_payload(), secrets=[signing.new_secret()], timeout=2)
    assert (result.error, result.status) == ("status", 401)


def test_it_accepts_a_call_signed_during_a_rotation(transport: BotTransport, bob_bot: str) -> None:
    secrets = [signing.new_secret(), BOB_SECRET]
    assert transport.post_sync(bob_bot, turn_payload(), secrets=secrets, timeout=2).ok


def _raw_post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request(
            "POST", "/", body=body, headers={"Content-Type": "application/json", **headers}
        )
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("age", [-400, 400])
def test_it_refuses_a_stale_or_future_timestamp(bob_bot: str, age: int) -> None:
    body = json.dumps(turn_payload()).encode()
    headers = signing.headers_for([BOB_SECRET], "msg_old", int(time.time()) + age, body)
    status, answer = _raw_post(bob_bot, body, headers)
    assert status == 401 and b"away from now" in answer


def test_it_refuses_an_unsigned_call(bob_bot: str) -> None:
    status, _ = _raw_post(bob_bot, b"{}", {})
    assert status == 401


def test_it_refuses_a_signed_body_that_is_not_a_protocol_message(bob_bot: str) -> None:
    for body in (b"[1, 2]", b"not json", b'{"protocol": 2, "type": "turn"}'):
        headers = signing.headers_for([BOB_SECRET], "msg_x", int(time.time()), body)
        assert _raw_post(bob_bot, body, headers)[0] == 400


@pytest.mark.parametrize("strategy", ["greedy", "examples/starter_bot.py:choose"])
def test_python_m_bots_serve_runs_as_a_real_process(
    transport: BotTransport, strategy: str
) -> None:
    """A reference strategy, or a bot writer's own function from its file (the one
    ``bots.evaluate --bot`` plays offline)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = ["--strategy", strategy, "--port", "0", "--secret", BOB_SECRET]
    process = subprocess.Popen(
        [sys.executable, "-m", "bots.serve", *command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"Serving strategy '{strategy}' at http://127.0.0.1:"), line + (
            process.stderr.read() if process.poll() is not None else ""
        )
        url = line.rsplit(" ", 1)[1].strip()
        payload = turn_payload(seed=11)
        result = transport.post_sync(url, payload, secrets=[BOB_SECRET], timeout=5)
        assert result.ok, result.detail
        assert result.body["move"] in payload["legal_moves"]
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("strategy", ["random", "greedy", "heuristic"])
def test_every_reference_strategy_can_be_served(transport: BotTransport, strategy: str) -> None:
    url, stop = serve_in_thread(strategy, BOB_SECRET, seed=2)
    try:
        for seed in range(5):
            payload = turn_payload(seed=seed)
            result = transport.post_sync(url, payload, secrets=[BOB_SECRET], timeout=2)
            assert result.ok and result.body["move"] in payload["legal_moves"]
    finally:
        stop()


def test_a_strategy_file_without_the_function_is_refused_at_start() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "bots.serve", "--strategy", "examples/starter_bot.py:nothing",
         "--port", "0", "--secret", BOB_SECRET],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "--strategy 'examples/starter_bot.py:nothing': " in refused.stderr
    assert "has no function nothing" in refused.stderr


def test_an_unknown_strategy_is_refused_at_start_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="greedy"):
        serve_in_thread("clairvoyant", BOB_SECRET)


def test_your_own_strategy_thinks_off_the_loop_so_two_games_calls_overlap(
    transport: BotTransport,
) -> None:
    """A bot writer's function may think for a while (play-outs): on the loop it held up the
    calls of the bot's other games behind it, past their budget. Each call here waits until
    the other one has arrived too: only calls that overlap both answer."""
    both_here = threading.Barrier(2, timeout=10)

    def patient(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        both_here.wait()
        return dict(view["legal_moves"][0])

    url, stop = serve_in_thread(patient, BOB_SECRET, seed=3)
    try:
        payload = turn_payload(seed=5)
        with ThreadPoolExecutor(2) as pool:
            calls = [pool.submit(transport.post_sync, url, payload, secrets=[BOB_SECRET],
                                 timeout=20) for _ in range(2)]
            results = [call.result() for call in calls]
        assert all(r.ok and r.body["move"] == payload["legal_moves"][0] for r in results)
    finally:
        stop()
