"""Following a game without hammering (events, long poll), and its replay afterwards."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from games import selectors, services, uno
from games.engine_state import load_state
from games.models import Game, MoveRecord
from tests.games.conftest import FakeClock, create_game, play_to_the_end

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _both_servings(serving: str) -> None:
    """Every test here runs against both ways of serving a wait (see ``serving``)."""


def test_events_since_zero_tell_the_story_of_the_table(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    body = alice_api.get(f"/api/games/{running_game['id']}/events/").json()
    assert [e["kind"] for e in body["events"]] == ["joined", "joined", "started"]
    assert [e["version"] for e in body["events"]] == [1, 2, 3]
    assert body["version"] == 3 and body["more"] is False
    assert body["events"][2]["data"] == {"players": ["alice", "bob"]}


def test_events_since_a_version_only_return_newer_ones(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    body = alice_api.get(f"/api/games/{running_game['id']}/events/", {"since": 2}).json()
    assert [e["version"] for e in body["events"]] == [3]


def test_a_long_poll_answers_at_once_when_something_already_happened(
    fake_clock: FakeClock, running_game: dict[str, Any], alice_api: APIClient
) -> None:
    before = fake_clock.mono
    body = alice_api.get(f"/api/games/{running_game['id']}/events/",
                         {"since": 0, "wait": 25}).json()
    assert len(body["events"]) == 3
    assert fake_clock.mono == before


def test_a_long_poll_with_nothing_happening_answers_empty_after_the_wait(
    fake_clock: FakeClock, running_game: dict[str, Any], alice_api: APIClient
) -> None:
    before = fake_clock.mono
    body = alice_api.get(f"/api/games/{running_game['id']}/events/",
                         {"since": running_game["version"], "wait": 2}).json()
    assert body["events"] == []
    assert 2 <= fake_clock.mono - before < 2.5


def test_a_long_poll_wakes_up_when_the_turn_clock_runs_out(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2, turn_seconds=5)
    bob_api.post(f"/api/games/{game['id']}/join/")
    started = alice_api.post(f"/api/games/{game['id']}/start/").json()
    body = bob_api.get(f"/api/games/{game['id']}/events/",
                       {"since": started["version"], "wait": 25}).json()
    kinds = [e["kind"] for e in body["events"]]
    assert "move" in kinds and "strike" in kinds
    move = next(e for e in body["events"] if e["kind"] == "move")
    assert move["data"]["source"] == "clock"


@pytest.mark.parametrize("query", [{"since": -1}, {"wait": 26}, {"wait": "soon"}])
def test_bad_event_queries_are_400(
    running_game: dict[str, Any], alice_api: APIClient, query: dict[str, Any]
) -> None:
    response = alice_api.get(f"/api/games/{running_game['id']}/events/", query)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_the_replay_is_refused_while_the_game_runs(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    response = alice_api.get(f"/api/games/{running_game['id']}/replay/")
    assert response.status_code == 409
    assert response.json()["code"] == "game_not_over"


def test_after_the_game_its_players_read_the_full_replay(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient,
    charlie_api: APIClient,
) -> None:
    gid = running_game["id"]
    play_to_the_end([alice_api, bob_api], gid, seed=3)
    replay = bob_api.get(f"/api/games/{gid}/replay/")
    assert replay.status_code == 200
    body = replay.json()
    game = Game.objects.get(pk=gid)
    assert body["seed"] == game.seed
    assert body["players"] == ["alice", "bob"]
    assert len(body["moves"]) == MoveRecord.objects.filter(game_id=gid).count()
    assert body["deals"][0]["hands"] and body["final"]["finished"] is True
    # The move log and seed really do rebuild the game.
    rebuilt = uno.replay(
        uno.Options.from_json(body["options"]), body["seed"],
        [(m["seat"], uno.Move.from_json(m["move"])) for m in body["moves"]],
    )
    assert rebuilt.to_json() == load_state(game).to_json()
    assert charlie_api.get(f"/api/games/{gid}/replay/").status_code == 403


def test_the_replay_downloads_as_a_json_attachment(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    play_to_the_end([alice_api, bob_api], gid, seed=4)
    response = alice_api.get(f"/api/games/{gid}/replay/", {"download": "1"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="uno-game-{gid}.json"'
    assert json.loads(response.content)["game"] == gid


def test_replay_times_are_written_like_every_other_time_in_the_api(
    alice_api: APIClient, bob_api: APIClient, running_game: dict[str, Any]
) -> None:
    gid = running_game["id"]
    play_to_the_end([alice_api, bob_api], gid)
    replay = alice_api.get(f"/api/games/{gid}/replay/").json()
    assert replay["moves"] and all(m["created_at"].endswith("Z") for m in replay["moves"])


def test_a_client_following_since_sees_every_event_even_when_commits_land_mid_read(
    fake_clock: FakeClock, running_game: dict[str, Any], alice_api: APIClient,
    bob_api: APIClient, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page is read in two queries (events, then moves); what commits in between (here a
    clock strike, then the next player's move) must not be skipped for good."""
    gid = running_game["id"]
    clients = [alice_api, bob_api]

    def commits_in_between() -> None:
        fake_clock.advance(61)
        assert services.turn_clock_enforce(game_id=gid)  # a clock move and a strike
        mover, body = _awaited(clients, gid)
        move = next(m for m in body["view"]["legal_moves"] if m["type"] != "play")
        response = mover.post(f"/api/games/{gid}/moves/",
                              {"version": body["version"], "move": move}, format="json")
        assert response.status_code == 201

    hooks = [commits_in_between]

    class MovesAfterAHook:
        class objects:  # stands in for MoveRecord.objects
            @staticmethod
            def filter(**window: Any) -> Any:
                while hooks:
                    hooks.pop()()
                return MoveRecord.objects.filter(**window)

    monkeypatch.setattr(selectors, "MoveRecord", MovesAfterAHook)
    seen, since = [], 0
    for _ in range(10):
        page = alice_api.get(f"/api/games/{gid}/events/", {"since": since}).json()
        seen += [e["version"] for e in page["events"]]
        since = page["events"][-1]["version"] if page["events"] else since
        if not page["more"] and not page["events"]:
            break
    monkeypatch.undo()
    truth = alice_api.get(f"/api/games/{gid}/events/").json()
    assert seen == [e["version"] for e in truth["events"]] == list(range(1, truth["version"] + 1))


def _awaited(clients: list[APIClient], gid: int) -> tuple[APIClient, dict[str, Any]]:
    body = clients[0].get(f"/api/games/{gid}/view/").json()
    seat = body["view"]["awaiting"]
    return clients[seat], clients[seat].get(f"/api/games/{gid}/view/").json()


def test_a_long_poll_on_a_game_that_is_over_answers_at_once(
    fake_clock: FakeClock, running_game: dict[str, Any], alice_api: APIClient,
    bob_api: APIClient,
) -> None:
    gid = running_game["id"]
    play_to_the_end([alice_api, bob_api], gid)
    final = alice_api.get(f"/api/games/{gid}/").json()["version"]
    before = fake_clock.mono
    body = alice_api.get(f"/api/games/{gid}/events/", {"since": final, "wait": 25}).json()
    assert (body["events"], body["status"], body["more"]) == ([], "finished", False)
    assert fake_clock.mono == before


@pytest.mark.parametrize("query", ["since=1.0", "since=-1", "since=", "sinse=1", "wait=x"])
def test_a_malformed_or_unknown_events_parameter_is_a_400_naming_it(
    running_game: dict[str, Any], alice_api: APIClient, query: str
) -> None:
    response = alice_api.get(f"/api/games/{running_game['id']}/events/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.json()["fields"]
