"""examples/starter_bot.py as a real subprocess on 127.0.0.1, sent turns signed by the
reference Standard Webhooks implementation (the ``standardwebhooks`` package)."""

from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from games.uno import Move, Options, apply, new_game, view

BOT = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.py"
SECRET = "whsec_" + base64.b64encode(b"alice's bot secret, 32 bytes!!!").decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"someone else's secret, 32 bytes!").decode()


@pytest.fixture(scope="module")
def bot() -> Iterator[int]:
    """The bot on a free port (it prints it); stopped at the end."""
    env = {**os.environ, "BOT_SECRET": SECRET}
    process = subprocess.Popen(
        [sys.executable, str(BOT), "--port", "0"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "listening on http://127.0.0.1:PORT/"
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield int(line.rsplit(":", 1)[1].strip("/\n"))
    finally:
        process.terminate()
        process.wait(timeout=10)


def signed(
    body: str, secret: str = SECRET, at: datetime | None = None, msg_id: str | None = None
) -> dict[str, str]:
    at = at or datetime.now(UTC)
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, at, body),
        "Content-Type": "application/json",
    }


def turn_body(state: Any, seat: int) -> str:
    seat_view = view(state, seat)
    return json.dumps(
        {
            "protocol": 1,
            "type": "turn",
            "game": 7,
            "version": state.move_count,
            "seat": seat,
            "options": state.options.to_json(),
            "view": seat_view,
            "legal_moves": seat_view["legal_moves"],
            "budget_ms": 2000,
            "latency": {"p50_ms": 1.0, "p99_ms": 5.0},
        }
    )


def post(conn: http.client.HTTPConnection, body: str, headers: dict[str, str]) -> tuple[int, Any]:
    conn.request("POST", "/", body=body.encode(), headers=headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, json.loads(data) if data else None


def test_it_answers_signed_turns_with_legal_moves_over_one_kept_alive_connection(bot: int) -> None:
    state = new_game(Options(players=2, single_hand=True), seed=11)
    conn = http.client.HTTPConnection("127.0.0.1", bot, timeout=10)
    sockets = set()
    turns = 0
    while not state.finished and turns < 40:
        seat = state.awaiting
        assert seat is not None
        body = turn_body(state, seat)
        status, answer = post(conn, body, signed(body))
        assert status == 200
        assert answer["move"] in view(state, seat)["legal_moves"]
        apply(state, seat, Move.from_json(answer["move"]))
        assert conn.sock is not None
        sockets.add(conn.sock.getsockname())
        turns += 1
    assert turns >= 10
    assert len(sockets) == 1  # every turn went over the same TCP connection
    conn.close()


def test_it_accepts_any_matching_signature_during_a_secret_rotation(bot: int) -> None:
    state = new_game(Options(players=3), seed=5)
    body = turn_body(state, state.turn)
    headers = signed(body)
    old = signed(body, OTHER_SECRET, msg_id=headers["webhook-id"])["webhook-signature"]
    headers["webhook-signature"] = f"{old} {headers['webhook-signature']}"
    conn = http.client.HTTPConnection("127.0.0.1", bot, timeout=10)
    assert post(conn, body, headers)[0] == 200


@pytest.mark.parametrize(
    "tamper",
    ["other_secret", "body_changed", "stale", "from_the_future", "no_signature", "not_v1"],
)
def test_it_rejects_a_bad_signature_or_a_stale_timestamp_with_401(bot: int, tamper: str) -> None:
    state = new_game(Options(players=2), seed=3)
    body = turn_body(state, state.turn)
    now = datetime.now(UTC)
    headers = {
        "other_secret": lambda: signed(body, OTHER_SECRET),
        "body_changed": lambda: signed(body.replace('"game": 7', '"game": 8')),
        "stale": lambda: signed(body, at=now - timedelta(minutes=6)),
        "from_the_future": lambda: signed(body, at=now + timedelta(minutes=6)),
        "no_signature": lambda: {k: v for k, v in signed(body).items() if k != "webhook-signature"},
        "not_v1": lambda: {
            **signed(body),
            "webhook-signature": signed(body)["webhook-signature"].replace("v1,", "v2,"),
        },
    }[tamper]()
    conn = http.client.HTTPConnection("127.0.0.1", bot, timeout=10)
    status, answer = post(conn, body, headers)
    assert status == 401 and "error" in answer
    # The connection stays usable: the next, valid turn on it is answered.
    assert post(conn, body, signed(body))[0] == 200


def test_it_acknowledges_start_and_end_notices_with_204(bot: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", bot, timeout=10)
    for notice in (
        {"protocol": 1, "type": "start", "game": 7, "seat": 0, "options": {"players": 2}},
        {
            "protocol": 1,
            "type": "end",
            "game": 7,
            "seat": 0,
            "options": {"players": 2},
            "result": {"winner": 0, "scores": [30, 0]},
            "replay": {"moves": []},
        },
    ):
        body = json.dumps(notice)
        assert post(conn, body, signed(body)) == (204, None)


def test_it_still_reads_its_secret_from_the_old_name() -> None:
    env = {k: v for k, v in os.environ.items() if k != "BOT_SECRET"}
    process = subprocess.Popen(
        [sys.executable, str(BOT), "--port", "0"], env={**env, "UNO_BOT_SECRET": SECRET},
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("listening on http://127.0.0.1:")
    finally:
        process.terminate()
        process.wait(timeout=10)
