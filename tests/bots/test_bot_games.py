"""Whole games with bot seats, driven by the server: two HTTP reference bots against each
other (checked against the move log and the replay), and a bot against a person over the
REST API, with the bot's turns played in the background."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from bots import dispatch, runner
from bots.models import BotCall
from bots.transport import BotTransport
from games import services
from games import uno as engine
from games.models import Game, GameStatus, MoveRecord, MoveSource
from tests.bots.fault_server import FaultServer
from tests.bots.helpers import bot_table, close_default_transport, register
from tests.games.conftest import client_for


@pytest.fixture(autouse=True)
def _fresh_default_transport() -> Iterator[None]:
    yield
    close_default_transport()

@pytest.mark.django_db
def test_two_http_reference_bots_play_a_whole_game_that_the_replay_reproduces(
    settings: Any, alice: Any, charlie: Any, two_reference_bots: list[Any],
    transport: BotTransport
) -> None:
    settings.BOTS_RUNNER = "off"
    game = bot_table(alice, two_reference_bots, options={"single_hand": False,
                                                        "target_score": 100})
    game = runner.play_game(game.pk, transport=transport)
    assert game.status == GameStatus.FINISHED and game.end_reason == "match"
    moves = list(MoveRecord.objects.filter(game=game).order_by("number"))
    assert moves and all(m.source == MoveSource.PLAYER for m in moves)  # no default, no strike
    # Every move the server applied was answered by a bot over HTTP, once.
    turns = BotCall.objects.filter(game=game, kind="turn", outcome="move")
    assert turns.count() == len(moves)
    assert not BotCall.objects.filter(game=game).exclude(error="").exists()
    assert {c.version for c in turns} == {m.version - 1 for m in moves}
    # The engine, fed the seed and the move log, reaches the same end as the server.
    state = engine.replay(engine.Options.from_json(game.options), game.seed,
                          [(m.seat, engine.Move.from_json(m.move)) for m in moves])
    assert state.finished and state.winner == game.winner and state.scores == game.scores
    # Both bots were told of the start and the end (with the replay).
    for bot in two_reference_bots:
        assert BotCall.objects.filter(bot=bot, game=game, kind="start", error="").count() == 1
        assert BotCall.objects.filter(bot=bot, game=game, kind="end", error="").count() == 1
    # alice sits at no seat, her bots do: as their owner she reads the replay; charlie, who
    # owns neither, does not.
    client = client_for(alice)
    replay = client.get(f"/api/games/{game.pk}/replay/")
    assert replay.status_code == 200
    assert [m["move"] for m in replay.json()["moves"]] == [m.move for m in moves]
    refused = client_for(charlie).get(f"/api/games/{game.pk}/replay/")
    assert refused.status_code == 403 and refused.json()["code"] == "not_a_player"
    public = client.get(f"/api/games/{game.pk}/").json()
    assert [s["player"] for s in public["seats"]] == ["bot:ref0", "bot:ref1"]


@pytest.mark.django_db
def test_a_driven_game_stops_where_it_stands_when_asked_and_resumes_later(
    settings: Any, alice: Any, two_reference_bots: list[Any], transport: BotTransport
) -> None:
    settings.BOTS_RUNNER = "off"
    game = bot_table(alice, two_reference_bots, options={"target_score": 100})
    def stop() -> bool:
        return MoveRecord.objects.filter(game=game).count() >= 5

    game = runner.play_game(game.pk, transport=transport, stop=stop)
    assert game.status == GameStatus.RUNNING and game.move_count == 5
    assert BotCall.objects.filter(game=game, kind="turn", outcome="move").count() == 5
    assert not BotCall.objects.filter(game=game, kind="end").exists()
    game = runner.play_game(game.pk, transport=transport, notices=False)
    assert game.status == GameStatus.FINISHED
    numbers = list(MoveRecord.objects.filter(game=game).order_by("number")
                   .values_list("number", flat=True))
    assert numbers == list(range(1, game.move_count + 1))


class _RacedTransport(BotTransport):
    """Asked for the decision at version ``at`` (asked ahead, while the move before it is
    being written), it first has the server play that earlier turn itself, as a seat's clock
    running out would: the runner's compare-and-set for the move then loses."""

    def __init__(self, at: int) -> None:
        super().__init__(allow_private=True)
        self.at = at

    def post_future(self, url: str, payload: Any, **kwargs: Any) -> Any:
        if payload["version"] == self.at:
            stored = Game.objects.get(pk=payload["game"])
            assert stored.version == self.at - 1  # the move before is not written yet
            assert services.seat_default(game_id=stored.pk, seat=stored.awaiting,
                                         expected_version=stored.version, reason="timeout")
        return super().post_future(url, payload, **kwargs)


@pytest.mark.django_db
def test_a_call_asked_ahead_of_a_move_that_lost_its_compare_and_set_is_discarded(
    settings: Any, alice: Any, two_reference_bots: list[Any]
) -> None:
    settings.BOTS_RUNNER = "off"
    game = bot_table(alice, two_reference_bots, options={"target_score": 100},
                     max_strikes=100)
    raced = _RacedTransport(at=game.version + 4)
    try:
        game = runner.play_game(game.pk, transport=raced, pipeline=True)
    finally:
        raced.close()
    assert game.status == GameStatus.FINISHED and game.end_reason == "match"
    moves = list(MoveRecord.objects.filter(game=game).order_by("number"))
    assert [m.number for m in moves] == list(range(1, len(moves) + 1))
    # The move whose write lost, and the answer asked on it, changed nothing: both are stale.
    lost = raced.at - 1
    calls = {(c.version, c.outcome) for c in BotCall.objects.filter(game=game, kind="turn")}
    assert (lost, "stale") in calls and (raced.at, "stale") in calls
    assert (lost, "move") not in calls
    # The server's turn: its default moves (a draw may be followed by a keep or a play), from
    # the version the race was forced at, by one seat.
    server = [m for m in moves if m.source != MoveSource.PLAYER]
    assert [m.version for m in server] == list(range(raced.at, raced.at + len(server)))
    assert 1 <= len(server) <= 2 and len({m.seat for m in server}) == 1
    # Every move answered as made is in the log, right after the version it was asked at.
    made = BotCall.objects.filter(game=game, kind="turn", outcome="move")
    by_version = {m.version: m for m in moves}
    assert all(by_version[c.version + 1].seat == c.seat for c in made)
    assert made.count() == len(moves) - len(server)
    state = engine.replay(engine.Options.from_json(game.options), game.seed,
                          [(m.seat, engine.Move.from_json(m.move)) for m in moves])
    assert state.finished and state.winner == game.winner and state.scores == game.scores


def _wait_for(predicate: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@pytest.mark.django_db(transaction=True)
def test_a_person_plays_a_bot_over_rest_and_the_bot_moves_in_the_background(
    settings: Any, alice: Any, bob: Any, two_reference_bots: list[Any]
) -> None:
    settings.BOTS_RUNNER = "thread"
    dispatch.forget()
    bot = two_reference_bots[0]
    alice_api, bob_api = client_for(alice), client_for(bob)
    created = alice_api.post("/api/games/", {"seats": 2, "join": False,
                                             "options": {"single_hand": True}}, format="json")
    gid = created.json()["id"]
    assert alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json"
                          ).status_code == 200
    assert bob_api.post(f"/api/games/{gid}/join/").status_code == 200
    assert alice_api.post(f"/api/games/{gid}/start/").status_code == 200
    try:
        _play_as_bob(bob_api, gid)
    finally:
        dispatch.drain()
    game = Game.objects.get(pk=gid)
    assert game.status == GameStatus.FINISHED
    bot_moves = MoveRecord.objects.filter(game=game, seat=0)
    assert bot_moves.exists() and not bot_moves.exclude(source=MoveSource.PLAYER).exists()
    assert BotCall.objects.filter(bot=bot, game=game, kind="turn", outcome="move").count() == (
        bot_moves.count())


def _play_as_bob(bob_api: APIClient, gid: int) -> None:
    """Bob plays his first legal move whenever it is his turn, waiting with moves?wait= for
    the bot's replies; no sleeping on our side of the API."""
    view = bob_api.get(f"/api/games/{gid}/view/?wait=10&until=turn").json()
    for _ in range(2000):
        if view["status"] != "running":
            return
        state = view["view"]
        if state.get("awaiting") != view["seat"] or not state["legal_moves"]:
            view = bob_api.get(f"/api/games/{gid}/view/?wait=10&until=turn").json()
            continue
        move = state["legal_moves"][0]
        answer = bob_api.post(f"/api/games/{gid}/moves/?wait=10&until=turn",
                              {"version": view["version"], "move": move}, format="json")
        if answer.status_code == 409:  # the bot moved meanwhile (an out-of-turn move)
            view = bob_api.get(f"/api/games/{gid}/view/").json()
            continue
        assert answer.status_code == 201, answer.content
        view = answer.json()
    raise AssertionError("the game did not end")


@pytest.mark.django_db(transaction=True)
def test_a_persons_move_is_answered_while_the_bot_is_still_thinking(
    settings: Any, alice: Any, bob: Any
) -> None:
    """The bot never answers (its budget is 5 s): bob's move comes back while the server's
    call to the bot for the next decision is open, with no move made for the bot yet."""
    settings.BOTS_RUNNER = "thread"
    settings.BOTS_TURN_TIMEOUT_MS = 5000
    dispatch.forget()
    fault = FaultServer(mode="hang").start()
    try:
        bot, _ = register(alice, "thinker", fault.url)
        alice_api, bob_api = client_for(alice), client_for(bob)
        table = {"seats": 2, "join": False, "options": {"single_hand": True}}
        gid = alice_api.post("/api/games/", table, format="json").json()["id"]
        alice_api.post(f"/api/games/{gid}/join/", {"bot": bot.pk}, format="json")
        bob_api.post(f"/api/games/{gid}/join/", {"seat": 1}, format="json")
        alice_api.post(f"/api/games/{gid}/start/")
        played = _move_until_the_bot_is_awaited(bob_api, gid)
        # The server's call for the bot's decision at that version arrives (it is open: the
        # bot hangs), and nothing has been played for the bot since bob's answer.
        version = played["version"]
        _wait_for(lambda: any(r.json().get("version") == version for r in fault.requests
                              if r.body))
        assert not MoveRecord.objects.filter(game_id=gid, version__gt=version).exists()
    finally:
        fault.stop()  # the open call fails at once (a strike), so the pool drains quickly
        dispatch.drain()


def _move_until_the_bot_is_awaited(bob_api: APIClient, gid: int) -> dict[str, Any]:
    for _ in range(50):
        view = bob_api.get(f"/api/games/{gid}/view/?wait=20&until=turn").json()
        assert view["status"] == "running" and view["view"]["awaiting"] == 1
        legal = view["view"]["legal_moves"]
        move = next((m for m in legal if m["type"] in ("play", "keep")), legal[0])
        answer = bob_api.post(f"/api/games/{gid}/moves/",
                              {"version": view["version"], "move": move}, format="json")
        assert answer.status_code == 201, answer.content
        if answer.json()["view"]["awaiting"] == 0:
            return dict(answer.json())
    raise AssertionError("the bot's turn never came")
