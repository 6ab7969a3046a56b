"""The turn clock: a client that never comes back does not freeze the table."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from games import services, tasks
from games.models import Game, GameEvent, MoveRecord, Seat
from tests.games.conftest import FakeClock, create_game

pytestmark = pytest.mark.django_db


def _start(owner: APIClient, others: list[APIClient], **body: Any) -> dict[str, Any]:
    game = create_game(owner, **body)
    for other in others:
        assert other.post(f"/api/games/{game['id']}/join/").status_code == 200
    started = owner.post(f"/api/games/{game['id']}/start/")
    assert started.status_code == 200, started.content
    return started.json()


def test_nothing_happens_before_the_deadline(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api], seats=2, turn_seconds=60)
    fake_clock.advance(59)
    assert alice_api.get(f"/api/games/{game['id']}/").json()["version"] == game["version"]
    assert not MoveRecord.objects.exists()


def test_when_the_clock_runs_out_the_server_draws_for_the_seat_and_records_a_strike(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api], seats=2, turn_seconds=60)
    late = Game.objects.get(pk=game["id"]).awaiting
    fake_clock.advance(61)
    after = alice_api.get(f"/api/games/{game['id']}/").json()
    moves = list(MoveRecord.objects.filter(game_id=game["id"]))
    assert moves and all(m.source == "clock" and m.seat == late for m in moves)
    assert moves[0].move in ({"type": "draw"}, {"type": "color", "color": moves[0].move.get(
        "color")}, {"type": "accept"})
    assert after["seats"][late]["strikes"] == 1
    assert after["awaiting"] != late or after["status"] != "running"
    strike = GameEvent.objects.get(game_id=game["id"], kind="strike")
    assert strike.seat == late
    assert strike.data == {"strikes": 1, "max_strikes": 3, "reason": "clock"}


def test_a_stale_client_learns_of_the_clock_move_by_a_409(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api], seats=2)
    clients = [alice_api, bob_api]
    late = Game.objects.get(pk=game["id"]).awaiting
    view = clients[late].get(f"/api/games/{game['id']}/view/").json()
    fake_clock.advance(61)
    response = clients[late].post(
        f"/api/games/{game['id']}/moves/",
        {"version": view["version"], "move": view["view"]["legal_moves"][0]}, format="json",
    )
    assert response.status_code == 409
    assert response.json()["code"] == "stale_version"
    assert response.json()["version"] > view["version"]


def test_max_strikes_forfeit_a_seat_and_a_two_seat_game_ends_for_the_other(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api], seats=2, max_strikes=1)
    late = Game.objects.get(pk=game["id"]).awaiting
    fake_clock.advance(61)
    after = alice_api.get(f"/api/games/{game['id']}/").json()
    assert after["status"] == "finished"
    assert after["end_reason"] == "forfeit"
    assert after["winner"] == 1 - late
    assert after["seats"][late]["forfeited"] is True
    kinds = list(GameEvent.objects.filter(game_id=game["id"]).values_list("kind", flat=True))
    assert kinds[-3:] == ["strike", "forfeited", "finished"]
    for client in (alice_api, bob_api):  # the views agree: over, nobody to move
        view = client.get(f"/api/games/{game['id']}/view/").json()["view"]
        assert (view["finished"], view["winner"], view["awaiting"]) == (True, 1 - late, None)
        assert view["legal_moves"] == [] and view["phase"] == "over"


def test_a_forfeited_seat_in_a_bigger_game_is_played_by_the_server_at_once(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api, charlie_api], seats=3, max_strikes=1)
    clients = [alice_api, bob_api, charlie_api]
    late = Game.objects.get(pk=game["id"]).awaiting
    fake_clock.advance(61)
    after = alice_api.get(f"/api/games/{game['id']}/").json()
    assert after["status"] == "running"
    assert after["seats"][late]["forfeited"] is True
    # Play on: whenever the forfeited seat's turn comes, the server moves for it.
    for _ in range(30):
        state = alice_api.get(f"/api/games/{game['id']}/").json()
        if state["status"] != "running":
            break
        assert state["awaiting"] != late
        seat = state["awaiting"]
        view = clients[seat].get(f"/api/games/{game['id']}/view/").json()
        move = next(m for m in view["view"]["legal_moves"] if m["type"] in ("draw", "keep",
                                                                            "accept", "color"))
        clients[seat].post(f"/api/games/{game['id']}/moves/",
                           {"version": view["version"], "move": move}, format="json")
    assert MoveRecord.objects.filter(game_id=game["id"], seat=late, source="server").exists()
    refused = clients[late].post(
        f"/api/games/{game['id']}/moves/",
        {"version": Game.objects.get(pk=game["id"]).version, "move": {"type": "draw"}},
        format="json",
    )
    assert refused.status_code == 409
    assert refused.json()["code"] in {"seat_forfeited", "game_not_running"}


def test_the_celery_task_is_a_no_op_until_the_deadline_passed(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    game = _start(alice_api, [bob_api], seats=2)
    assert tasks.turn_clock_check(game["id"], game["version"]) is False
    fake_clock.advance(60)
    assert tasks.turn_clock_check(game["id"], game["version"]) is True
    assert tasks.turn_clock_check(game["id"], game["version"]) is False  # fresh deadline


def test_arming_the_clock_schedules_the_task_after_commit_when_a_broker_exists(
    settings: Any, alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    calls: list[Any] = []
    monkeypatch.setattr(tasks.turn_clock_check, "apply_async",
                        lambda *a, **k: calls.append((a, k)))
    game = services.game_create(user=alice, options={}, seats=2, turn_seconds=30)
    services.seat_join(game_id=game.pk, user=bob)
    with django_capture_on_commit_callbacks(execute=True):
        services.game_start(game_id=game.pk, user=alice)
    assert len(calls) == 1
    assert calls[0][1]["countdown"] >= 30
    assert calls[0][0][0][0] == game.pk


def test_strikes_stay_on_the_seat(fake_clock: FakeClock, alice_api: APIClient,
                                  bob_api: APIClient) -> None:
    game = _start(alice_api, [bob_api], seats=2, max_strikes=5)
    for _ in range(3):
        fake_clock.advance(61)
        alice_api.get(f"/api/games/{game['id']}/")
    assert sum(Seat.objects.filter(game_id=game["id"]).values_list("strikes", flat=True)) == 3


def _rigged_three(alice: Any, bob: Any, charlie: Any, hands: list[list[str]],
                  **options: Any) -> Game:
    """A running three-seat game with these hands, a red 3 on top, seat 0 to play."""
    from games.uno import Options
    from games.uno.scenario import scenario

    game = services.game_create(user=alice, options=options, seats=3)
    services.seat_join(game_id=game.pk, user=bob)
    services.seat_join(game_id=game.pk, user=charlie)
    services.game_start(game_id=game.pk, user=alice)
    state = scenario(Options(players=3, **options), hands=hands, top="R3",
                     deck=["Y1", "Y2", "Y3", "Y4", "Y5", "Y6"])
    Game.objects.filter(pk=game.pk).update(state=state.to_json(), awaiting=state.awaiting)
    return Game.objects.get(pk=game.pk)


def _play(client: APIClient, game_id: int, move: dict[str, Any]) -> Any:
    version = Game.objects.get(pk=game_id).version
    response = client.post(f"/api/games/{game_id}/moves/", {"version": version, "move": move},
                           format="json")
    assert response.status_code == 201, response.content
    return Game.objects.get(pk=game_id)


def test_a_jump_in_that_hands_the_turn_back_gives_the_awaited_seat_a_fresh_clock(
    fake_clock: FakeClock, alice: Any, bob: Any, charlie: Any, charlie_api: APIClient
) -> None:
    """Seat 0 is awaited; at 55 s seat 2 jumps in and the turn comes back to seat 0 (2 + 1 is
    0 with three seats): the board changed under it, so its decision starts again."""
    game = _rigged_three(alice, bob, charlie, [["R1", "G7"], ["B1", "B2", "B5"],
                                               ["B3", "B4", "R3"]], jump_in=True)
    fake_clock.advance(55)
    after = _play(charlie_api, game.pk, {"type": "play", "card": "R3"})
    assert after.awaiting == 0
    assert after.turn_deadline == fake_clock.wall + timedelta(seconds=after.turn_seconds)
    fake_clock.advance(10)
    services.turn_clock_enforce(game_id=game.pk)
    assert Seat.objects.get(game=game, index=0).strikes == 0


def test_a_catch_by_the_awaited_seat_does_not_reset_its_clock(
    fake_clock: FakeClock, alice: Any, bob: Any, charlie: Any, alice_api: APIClient,
    bob_api: APIClient,
) -> None:
    game = _rigged_three(alice, bob, charlie, [["R1", "G7"], ["B1", "B2", "R5"],
                                               ["B3", "B4", "R3"]])
    played = _play(alice_api, game.pk, {"type": "play", "card": "R1"})  # no Uno called
    assert played.awaiting == 1
    fake_clock.advance(50)
    caught = _play(bob_api, game.pk, {"type": "catch", "target": 0})
    assert caught.awaiting == 1 and caught.turn_deadline == played.turn_deadline


def test_the_sweep_settles_every_overdue_clock_and_nothing_else(
    fake_clock: FakeClock, alice_api: APIClient, bob_api: APIClient
) -> None:
    overdue = [_start(alice_api, [bob_api], seats=2, turn_seconds=60) for _ in range(2)]
    fake_clock.advance(61)
    fresh = _start(alice_api, [bob_api], seats=2, turn_seconds=60)
    assert tasks.turn_clock_sweep() == 2
    for game in overdue:
        assert Game.objects.get(pk=game["id"]).version > game["version"]
    assert Game.objects.get(pk=fresh["id"]).version == fresh["version"]
    assert tasks.turn_clock_sweep() == 0


def test_celery_beat_schedules_the_sweep_by_a_registered_task_name() -> None:
    from arena.celery import app

    entry = app.conf.beat_schedule["turn-clock-sweep"]
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks
    assert entry["task"] == tasks.turn_clock_sweep.name
