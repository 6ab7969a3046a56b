"""A server stopped while it holds waits (a deploy, a restart) answers them before it goes:
each with its game as it is, as if the wait ran out. A move played with ``wait`` is committed
before it waits, so its answer is the 201 of the move, never an error."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from arena.accounts.services import token_create
from games.models import Game
from tests.live_server import call, live_server, start_a_game, stop_serving

pytestmark = pytest.mark.django_db(transaction=True)


def _hands_over(move: dict[str, Any]) -> bool:
    """A move after which the opponent is awaited: a number card, or keeping a drawn card (a
    Skip, a Reverse or a Draw Two of two players, a wild's colour or a draw leave the turn where
    it is, and the wait would answer at once)."""
    return move["type"] == "keep" or (move["type"] == "play" and move["card"][1:].isdigit())


def _a_move_that_hands_the_turn_over(
    port: int, game_id: int, keys: list[str]
) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """The awaited seat, its view, and a move of its that hands the turn over: moves that do
    not are played first (bounded)."""
    for _ in range(20):
        seat = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[0])[1]["view"][
            "awaiting"]
        view = call(port, "GET", f"/api/games/{game_id}/view/", key=keys[seat])[1]
        legal = view["view"]["legal_moves"]
        over = [m for m in legal if _hands_over(m)]
        move = {"version": view["version"], "move": (over or legal)[0]}
        if over:
            return seat, view, move
        assert call(port, "POST", f"/api/games/{game_id}/moves/", key=keys[seat],
                    body=move)[0] == 201
    raise AssertionError("no move hands the turn over")


def test_a_move_played_with_wait_is_answered_201_when_the_server_stops(
    alice: Any, bob: Any
) -> None:
    keys = [token_create(user=alice)[1], token_create(user=bob)[1]]
    answers: list[tuple[int, Any, dict[str, str]]] = []
    with live_server() as port:
        game = start_a_game(port, keys[0], keys[1])
        seat, view, move = _a_move_that_hands_the_turn_over(port, game["id"], keys)

        def play() -> None:
            answers.append(call(port, "POST", f"/api/games/{game['id']}/moves/?wait=25&until=turn",
                                key=keys[seat], body=move))

        player = threading.Thread(target=play, daemon=True)
        player.start()
        committed = view["version"] + 1
        for _ in range(100):  # bounded: the move is committed, its answer waits for the turn
            if Game.objects.get(pk=game["id"]).version >= committed:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        assert not answers, answers  # still waiting for the opponent
        stopped = time.monotonic()
        stop_serving(port)
        player.join(20)
    assert answers, "no answer"
    status, body, _ = answers[0]
    assert status == 201, body
    assert body["version"] == committed  # the game as it is: the opponent has not moved
    assert time.monotonic() - stopped < 10  # not the 25 s of the wait
