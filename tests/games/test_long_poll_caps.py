"""Long polls cannot starve a server: a process holds only so many at once (per user and in
all); over a cap, 429 with Retry-After. Real concurrent requests against a gunicorn of 4
threads with caps of 2 waits in all and 1 per user, on both servings (the ASGI one, where waits
hold no thread, and a WSGI one, where each holds one)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings

from arena.accounts.services import token_create
from tests.live_server import call, live_server, play_one_move, start_a_game

pytestmark = pytest.mark.django_db(transaction=True)

# The process's cap is WAIT_MAX_PER_PROCESS on the ASGI serving (waits hold no thread there),
# LONG_POLL_MAX_PER_PROCESS on a WSGI server.
CAPS = {
    "LONG_POLL_MAX_PER_PROCESS": "2", "WAIT_MAX_PER_PROCESS": "2", "LONG_POLL_MAX_PER_USER": "1"
}


class Requests:
    """Requests sent at once, each on its own thread and connection."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.answers: dict[str, tuple[int, Any, dict[str, str]]] = {}

    def send(self, name: str, *args: Any, **kwargs: Any) -> None:
        def run() -> None:
            self.answers[name] = call(*args, **kwargs)

        thread = threading.Thread(target=run, name=name, daemon=True)
        self.threads.append(thread)
        thread.start()

    def answered(self, *names: str) -> bool:
        return all(name in self.answers for name in names)

    def wait_for(self, *names: str) -> None:
        for thread in self.threads:
            if thread.name in names:
                thread.join(60)  # bounded
        assert self.answered(*names), f"no answer to {names}"

    def pending(self) -> list[str]:
        return [thread.name for thread in self.threads if thread.is_alive()]


@pytest.mark.parametrize("serving", ["asgi", "wsgi"])
def test_waits_over_the_caps_are_refused_and_the_server_keeps_answering(
    alice: Any, bob: Any, charlie: Any, serving: str
) -> None:
    keys = [token_create(user=user)[1] for user in (alice, bob, charlie)]
    with live_server(CAPS, workers=1, threads=4, serving=serving) as port:
        game = start_a_game(port, keys[0], keys[1])
        path = f"/api/games/{game['id']}"
        mover = keys[game["awaiting"]]
        other = keys[1 - game["awaiting"]]
        etag = call(port, "GET", f"{path}/view/", key=mover)[2]["ETag"]
        waiting = Requests()
        # The mover holds three view waits (nothing will change), the other three event waits:
        # six waits on a server of four threads.
        for i in range(3):
            waiting.send(f"view{i}", port, "GET", f"{path}/view/?wait=25", key=mover,
                         headers={"If-None-Match": etag})
            waiting.send(f"events{i}", port, "GET",
                         f"{path}/events/?since={game['version']}&wait=25", key=other)
        # One of each is held; the user's others are refused at once (a user is refused only
        # while a wait of theirs is held, so both held waits are waiting from here on).
        for _ in range(600):  # bounded: 60 s
            if sum(answer[0] == 429 for answer in waiting.answers.values()) >= 4:
                break
            time.sleep(0.1)
        refused = {name: answer for name, answer in waiting.answers.items()}
        assert len(refused) == 4, {name: answer[:2] for name, answer in refused.items()}
        for status, body, headers in refused.values():
            assert status == 429 and body["code"] == "too_many_waits", body
            assert int(headers["Retry-After"]) >= 1
        held = waiting.pending()
        assert sorted(name[:-1] for name in held) == ["events", "view"]

        # The process's cap: charlie (any user) may not wait either, but is answered.
        status, body, _ = call(port, "GET", f"{path}/events/?since={game['version']}&wait=25",
                               key=keys[2])
        assert (status, body["code"]) == (429, "too_many_waits")
        # The health check and a plain read are answered while both waits are still held.
        health = call(port, "GET", "/healthz/")[1]["counters"]
        assert call(port, "GET", f"{path}/", key=keys[2])[0] == 200
        assert waiting.pending() == held
        assert health["long_polls_open"] == 2
        assert health["long_polls_refused"] == 5

        # A move asking to wait, over its user's cap, is played and answered without waiting
        # (the rival will not move): the refusal is counted.
        status, played = play_one_move(port, game["id"], keys[:2], "?wait=25&until=turn")
        assert status == 201, played
        assert call(port, "GET", "/healthz/")[1]["counters"]["long_polls_refused"] == 6

        # The move woke both held waits.
        waiting.wait_for(*held)
        answers = {name[:-1]: waiting.answers[name] for name in held}
        assert answers["view"][0] == 200
        assert answers["view"][1]["version"] == played["version"]
        assert answers["events"][0] == 200 and answers["events"][1]["events"]
    assert all(not thread.is_alive() for thread in waiting.threads)


def test_the_shipped_web_commands_serve_waits_without_a_thread_each() -> None:
    """docker-compose.yml's web service and the image's command run the ASGI application on
    uvicorn workers (arena.serving): a process holds thousands of waits, a user a few dozen."""
    root = Path(__file__).resolve().parents[2]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    image = re.search(r"^CMD (.*)$", (root / "Dockerfile").read_text(), re.MULTILINE)
    assert image is not None
    for shipped in (" ".join(command), image.group(1)):
        assert "arena.asgi" in shipped and "arena.workers.Worker" in shipped, shipped
    assert settings.WAIT_MAX_PER_PROCESS >= 1000
    assert settings.LONG_POLL_MAX_PER_USER < settings.WAIT_MAX_PER_PROCESS
