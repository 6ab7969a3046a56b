"""docs/api.md's stream bot, run as written: two copies of it (alice's and bob's) play two
games at once against each other, each on its one stream, until both games are over; they play
through a tight move rate limit without a strike; and against a scripted server it sends a
move again until it is played (503, 429, 500, a closed keep-alive) or plays a legal one instead
of a refused one."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.accounts.services import token_create
from games.models import EventKind, Game, GameEvent, GameStatus, MoveRecord, MoveSource
from tests.games.stream_helpers import asgi_server
from tests.live_server import ROOT, call, start_a_game

pytestmark = pytest.mark.django_db(transaction=True)

HEADING = "## One stream for all your games"


def the_bot() -> str:
    doc = (ROOT / "docs" / "api.md").read_text()
    start = doc.index(HEADING)
    section = doc[start:doc.index("\n## ", start + len(HEADING))]
    return section.split("```python", 1)[1].split("```", 1)[0]


def run_bots(port: int, keys: list[str], stop_after: int, tmp_path: Path) -> list[str]:
    """One copy of the bot per key, each until ``stop_after`` games ended: their outputs."""
    bot = tmp_path / "stream_bot.py"
    bot.write_text(the_bot())
    bots = [
        subprocess.Popen(
            [sys.executable, str(bot)], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
            env={"ARENA_PORT": str(port), "ARENA_TOKEN": key, "STOP_AFTER": str(stop_after),
                 "PATH": "/usr/bin:/bin"},
        )
        for key in keys
    ]
    try:
        outputs = [process.communicate(timeout=300)[0] for process in bots]
    finally:
        for process in bots:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert [process.returncode for process in bots] == [0] * len(bots), outputs
    return outputs


def test_the_documented_stream_bot_plays_two_games_at_once(alice, bob, tmp_path: Path):
    keys = [token_create(user=user)[1] for user in (alice, bob)]
    with asgi_server() as port:
        games = [start_a_game(port, keys[0], keys[1]) for _ in range(2)]
        outputs = run_bots(port, keys, 2, tmp_path)
    for game in games:
        assert Game.objects.get(pk=game["id"]).status == GameStatus.FINISHED
    for output in outputs:
        assert sorted(line.split()[1] for line in output.splitlines()) == sorted(
            str(game["id"]) for game in games)


def test_the_documented_stream_bot_waits_out_the_move_rate_limit_and_is_never_struck(
    alice, bob, tmp_path: Path
):
    """Moves limited to 5 a second per user: each 429 is waited out (its Retry-After) and the
    same move sent again, so no turn is left to the clock (5 s here). Before, the bot dropped
    a throttled move: the game sat until the clock played it and struck the bot."""
    keys = [token_create(user=user)[1] for user in (alice, bob)]
    with asgi_server({"THROTTLE_MOVE": "5/second"}) as port:
        status, game, _ = call(port, "POST", "/api/games/", key=keys[0], body={
            "seats": 2, "turn_seconds": 5, "options": {"single_hand": True}})
        assert status == 201, game
        assert call(port, "POST", f"/api/games/{game['id']}/join/", key=keys[1])[0] == 200
        assert call(port, "POST", f"/api/games/{game['id']}/start/", key=keys[0])[0] == 200
        run_bots(port, keys, 1, tmp_path)
    assert Game.objects.get(pk=game["id"]).status == GameStatus.FINISHED
    assert not GameEvent.objects.filter(game_id=game["id"], kind=EventKind.STRIKE).exists()
    sources = set(MoveRecord.objects.filter(game_id=game["id"]).values_list("source", flat=True))
    assert sources == {MoveSource.PLAYER}


class ScriptedArena(http.server.ThreadingHTTPServer):
    """A stand-in for the server, for what a live one does not do on cue: its stream sends
    ``turns`` one at a time (each once, as the stream does), the next when the move before was
    answered 201; the moves are answered from ``answers`` in order, each ``(status, headers,
    body)``, and ``close=True`` closes the connection after it, as the server closes an idle
    keep-alive. Every move posted is kept: (version, move, Idempotency-Key)."""

    daemon_threads = True

    def __init__(self, turns: list[dict[str, Any]], answers: list[tuple[int, dict, dict, bool]]
                 ) -> None:
        super().__init__(("127.0.0.1", 0), _ScriptedHandler)
        self.turns, self.answers = list(turns), list(answers)
        self.posted: list[tuple[int, dict[str, Any], str]] = []
        self.played = threading.Semaphore(0)  # one release per 201

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _ScriptedHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedArena

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()
        for turn in self.server.turns:
            self._event({"id": "9-0", "type": "turn", **turn})
            # A bot that dropped its move waits here for a turn that never comes again.
            self.server.played.acquire(timeout=10)
        self._event({"id": "9-0", "type": "ended", "game": 7, "version": 99,
                     "status": "finished", "reason": "match", "winner": 0, "scores": [0, 0]})
        self.close_connection = True

    def _event(self, event: dict[str, Any]) -> None:
        self.wfile.write((json.dumps(event) + "\n").encode())
        self.wfile.flush()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.posted.append(
            (body["version"], body["move"], self.headers["Idempotency-Key"]))
        status, headers, answer, close = self.server.answers.pop(0) if self.server.answers \
            else (409, {}, {"code": "stale_version"}, False)
        raw = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Type": "application/json",
                            "Content-Length": str(len(raw))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()
        self.close_connection = close  # without a word: the client thinks it still open
        if status == 201:
            self.server.played.release()


def test_the_documented_stream_bot_sends_its_move_again_until_it_is_played(tmp_path: Path):
    """A turn comes once per version: a move answered 503, 429 or 500 is the bot's to send
    again (the same move, the same key), one a bug of its own choose() got refused (422) is
    replaced by the first legal move, and a keep-alive the server closed is replaced by a new
    connection. Before, the bot dropped every such move, and the turn clock struck it."""
    bot = tmp_path / "stream_bot.py"
    bot.write_text(the_bot())
    draw, red_five = {"type": "draw"}, {"type": "play", "card": "R5"}  # choose() plays a card
    turns = [
        {"game": 7, "version": 3, "seat": 0, "status": "running", "turn_deadline": None,
         "view": {"legal_moves": [draw, red_five]}},
        {"game": 7, "version": 5, "seat": 0, "status": "running", "turn_deadline": None,
         "view": {"legal_moves": [draw]}},
    ]
    answers = [
        (503, {"Retry-After": "0"}, {"code": "database_busy"}, False),
        (429, {"Retry-After": "0"}, {"code": "throttled"}, False),
        (500, {}, {"code": "server_error"}, False),
        (422, {}, {"code": "illegal_move", "detail": "R5 matches nothing"}, False),
        (201, {}, {"version": 4}, True),
        (201, {}, {"version": 6}, False),
    ]
    arena = ScriptedArena(turns, answers)
    serving = threading.Thread(target=arena.serve_forever, daemon=True)
    serving.start()
    try:
        done = subprocess.run(
            [sys.executable, str(bot)], cwd=tmp_path, capture_output=True, text=True,
            timeout=60, env={"ARENA_PORT": str(arena.port), "ARENA_TOKEN": "uno_test",
                             "STOP_AFTER": "1", "PATH": "/usr/bin:/bin"},
        )
    finally:
        arena.shutdown()
        arena.server_close()
    assert done.returncode == 0, done.stderr
    keys = [key for _, _, key in arena.posted]
    assert [(version, move) for version, move, _ in arena.posted] == [
        (3, red_five)] * 4 + [(3, draw), (5, draw)], done.stderr
    assert len(set(keys[:4])) == 1 and len(set(keys)) == 3  # one key per move, kept on retries
    assert "422" in done.stderr and "R5 matches nothing" in done.stderr  # the bug, logged
    assert done.stdout.splitlines() == ["game 7 over, winner seat 0"]


def test_the_documented_stream_bot_stops_on_a_token_the_server_refuses(tmp_path: Path):
    """A 401 is not mended by waiting: the bot says so and stops, instead of asking again
    every 5 s for ever."""
    bot = tmp_path / "stream_bot.py"
    bot.write_text(the_bot())
    with asgi_server() as port:
        done = subprocess.run(
            [sys.executable, str(bot)], cwd=tmp_path, capture_output=True, text=True,
            timeout=60, env={"ARENA_PORT": str(port), "ARENA_TOKEN": "0" * 40,
                             "PATH": "/usr/bin:/bin"},
        )
    assert done.returncode == 1
    assert done.stderr.startswith("401 ") and done.stderr.rstrip().endswith("check TOKEN")
