"""The newcomer's documents say what the project does: README's commands, docs/api.md's steps."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
API_DOC = (ROOT / "docs" / "api.md").read_text()


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start:] if following < 0 else text[start:following]


def test_the_readme_lists_as_many_commands_as_it_says_and_the_servers_address_option() -> None:
    block = section(README, "## Two commands").split("```sh", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.startswith("python3 dev.py")]
    assert len(commands) == 2, commands
    assert "--addr" in section(README, "## Two commands")


@pytest.mark.django_db
def test_step_two_of_the_api_walkthrough_works_as_written(
    alice: Any, bob: Any, settings: Any
) -> None:
    """The creator sits at the table it made; the opponent joins (the creator joining its own
    table again is a 409, as the step says)."""
    from tests.games.conftest import client_for

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    step = section(API_DOC, "## 2. Create or join a table")
    created_with = json.loads(re.search(r"-d '(\{.*?\})'", step).group(1))  # type: ignore[union-attr]
    joins = [line for line in step.splitlines() if "/join/" in line and "curl" in line]
    assert joins and all('-H "$AUTH2"' in line for line in joins)  # the opponent's token

    creator: APIClient = client_for(alice)
    opponent: APIClient = client_for(bob)
    game = creator.post("/api/games/", created_with, format="json")
    assert game.status_code == 201
    listed = opponent.get("/api/games/", {"open_seats": "true"}).json()["results"]
    assert [g["id"] for g in listed] == [game.json()["id"]]
    assert opponent.post(f"/api/games/{game.json()['id']}/join/").status_code == 200
    again = creator.post(f"/api/games/{game.json()['id']}/join/")
    assert again.status_code == 409 and again.json()["code"] == "already_seated"
    assert "already_seated" in step


def test_every_error_code_the_api_raises_is_listed_in_the_docs() -> None:
    # A client switches on ``code``: the list in docs/api.md's errors section is the one place
    # to learn them (the schema's Error.code is a plain string).
    import importlib
    import pkgutil

    from rest_framework.exceptions import APIException

    for app in ("core", "games", "bots", "arena"):
        for module in pkgutil.walk_packages([str(ROOT / app)], prefix=f"{app}."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)

    def ours(cls: type) -> list[type]:
        found = []
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in ("core", "games", "bots", "arena"):
                found.append(sub)
            found += ours(sub)
        return found

    listed = API_DOC[API_DOC.index("Codes: `invalid`"):
                     API_DOC.index("Every error under `/api/` has this body")]
    bases = {"error", "conflict"}  # the base classes' codes: never raised themselves
    missing = {cls.default_code for cls in ours(APIException)} - bases
    missing = {code for code in missing if f"`{code}`" not in listed}
    assert not missing, f"docs/api.md's error codes lack {sorted(missing)}"


# --- the minimal bot loop (httpx), run against answers scripted through httpx's MockTransport
SETTINGS_LINE = 'TOKEN, GAME = os.environ["TOKEN"], int(os.environ["GAME"])'


def long_poll_loop() -> str:
    block = section(API_DOC, "## A minimal bot loop")
    return block.split("```python", 1)[1].split("```", 1)[0]


def run_long_poll_loop(
    monkeypatch: pytest.MonkeyPatch, answer: Any
) -> tuple[list[Any], list[float]]:
    """The loop as written, its requests answered by ``answer(request, number)``: the
    requests it sent and the seconds it slept (not slept here). A loop that keeps asking
    past 50 requests is stopped."""
    import time

    import httpx

    sent: list[httpx.Request] = []
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if len(sent) > 50:
            raise RuntimeError("still asking after 50 requests: the loop spins")
        return answer(request, len(sent))

    real_client = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **kwargs: real_client(
        transport=httpx.MockTransport(handler), **kwargs))
    monkeypatch.setattr(time, "sleep", slept.append)
    monkeypatch.setenv("TOKEN", "uno_x")
    monkeypatch.setenv("GAME", "7")
    exec(compile(long_poll_loop(), "docs/api.md", "exec"), {})
    return sent, slept


def _view(version: int, awaiting: int, status: str = "running") -> dict[str, Any]:
    return {"game": 7, "version": version, "seat": 0, "status": status, "turn_deadline": None,
            "view": {"awaiting": awaiting, "legal_moves": [{"type": "draw"}]}}


def test_the_documented_long_poll_loop_waits_as_told_and_sends_a_throttled_move_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: every answer but a 200/201 went straight into the next long poll (1,416
    ``too_many_waits`` in 8 s from six copies of it), and a ``throttled`` move crashed it."""
    import httpx

    def answer(request: httpx.Request, number: int) -> httpx.Response:
        if request.method == "POST":
            if number == 6:
                return httpx.Response(429, json={"code": "throttled", "detail": "..."},
                                      headers={"Retry-After": "3"})
            return httpx.Response(201, json=_view(13, 0, "finished"))
        if number == 1:
            return httpx.Response(200, json=_view(11, 1), headers={"ETag": '"7-11-0"'})
        if number in (2, 3, 4):
            return httpx.Response(429, json={"code": "too_many_waits", "detail": "..."},
                                  headers={"Retry-After": "2"})
        return httpx.Response(200, json=_view(12, 0), headers={"ETag": '"7-12-0"'})

    sent, slept = run_long_poll_loop(monkeypatch, answer)
    assert [request.method for request in sent] == ["GET"] * 5 + ["POST"] * 2
    assert slept == [2, 2, 2, 3]
    first, again = sent[5], sent[6]
    assert again.content == first.content  # the same move, at the same version
    assert again.headers["Idempotency-Key"] == first.headers["Idempotency-Key"]


@pytest.mark.parametrize(("status", "code"), [(403, "not_a_player"), (404, "not_found")])
def test_the_documented_long_poll_loop_stops_with_a_message_where_it_has_no_seat(
    monkeypatch: pytest.MonkeyPatch, status: int, code: str
) -> None:
    import httpx

    def answer(request: httpx.Request, number: int) -> httpx.Response:
        return httpx.Response(status, json={"code": code, "detail": "You have no seat here."})

    with pytest.raises(SystemExit, match=f"game 7: {status} You have no seat here."):
        run_long_poll_loop(monkeypatch, answer)


@pytest.mark.django_db(transaction=True)
def test_two_copies_of_the_documented_long_poll_loop_play_a_game_through(
    alice: Any, bob: Any
) -> None:
    """alice's and bob's copies of the loop, each on its own thread, against a real server."""
    import threading

    from arena.accounts.services import token_create
    from games.models import Game, GameStatus
    from tests.live_server import live_server, start_a_game

    keys = [token_create(user=user)[1] for user in (alice, bob)]
    with live_server() as port:
        game = start_a_game(port, keys[0], keys[1])
        code = long_poll_loop().replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
        assert SETTINGS_LINE in code
        failures: list[BaseException] = []

        def play(key: str) -> None:
            try:
                # Two players in one process: each copy gets its own instead of the
                # environment's.
                own = code.replace(SETTINGS_LINE, f"TOKEN, GAME = {key!r}, {game['id']}")
                exec(compile(own, "docs/api.md", "exec"), {})
            except BaseException as exc:  # shown below, SystemExit included
                failures.append(exc)

        players = [threading.Thread(target=play, args=(key,)) for key in keys]
        for player in players:
            player.start()
        for player in players:
            player.join(240)
    assert not failures and not any(player.is_alive() for player in players), failures
    assert Game.objects.get(pk=game["id"]).status == GameStatus.FINISHED


def test_the_stream_section_tells_a_bot_writer_what_the_stream_itself_does_not(
    settings: Any,
) -> None:
    """What a bot writer playing over the stream learnt the hard way (an outside review):
    a turn comes once, ids are cursors, out-of-turn chances never come, the caps are each
    process's, and the example bot answers its games one at a time."""
    text = " ".join(section(API_DOC, "## One stream for all your games").split())
    assert "A `turn` is sent once per game version" in text
    assert "Every event has an `id`, a heartbeat too" in text
    assert "Never tell events apart by id" in text
    assert "A `turn` comes only when your seat is awaited" in text
    assert "Uno-catch window" in text and "jump-in" in text
    assert "in each web process, not across the server" in text
    assert f"`STREAM_MAX_PER_USER` ({settings.STREAM_MAX_PER_USER})" in text
    assert "one at a time, on one loop" in text and "N·t" in text
    limits = " ".join(section(API_DOC, "## Rate limits").split())
    assert "capped in each web process, not across the server" in limits


def heading_anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_quickstart_points_bots_with_no_endpoint_to_the_stream_section() -> None:
    quickstart = section(README, "## Write a bot: quickstart")
    linked = re.findall(r"\(docs/api\.md#([\w-]+)\)", quickstart)
    anchors = {heading_anchor(line.lstrip("#")) for line in API_DOC.splitlines()
               if line.startswith("#")}
    assert "one-stream-for-all-your-games" in linked
    assert set(linked) <= anchors, sorted(set(linked) - anchors)
