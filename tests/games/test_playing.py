"""Playing over HTTP: views, moves and the version protocol, to the final score."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games import services
from games.errors import NotYourTurn
from games.idempotency import KEY_LIFETIME
from games.models import Game, IdempotencyRecord, MoveRecord
from games.uno.cards import CODES, POINTS
from tests.games.conftest import create_game, play_to_the_end

pytestmark = pytest.mark.django_db


def _view(client: APIClient, game_id: int) -> dict[str, Any]:
    response = client.get(f"/api/games/{game_id}/view/")
    assert response.status_code == 200, response.content
    return response.json()


def _awaited(clients: list[APIClient], game_id: int) -> tuple[int, APIClient, dict[str, Any]]:
    """The seat the game waits for, its client, and that client's view."""
    seat = _view(clients[0], game_id)["view"]["awaiting"]
    return seat, clients[seat], _view(clients[seat], game_id)


def _post(client: APIClient, game_id: int, version: int, move: Any, **headers: str) -> Any:
    return client.post(
        f"/api/games/{game_id}/moves/", {"version": version, "move": move}, format="json",
        headers=headers,
    )


def test_two_api_clients_play_a_single_hand_to_the_final_score(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    play_to_the_end([alice_api, bob_api], running_game["id"], seed=1)
    game = alice_api.get(f"/api/games/{running_game['id']}/").json()
    assert game["status"] == "finished"
    assert game["end_reason"] == "match"
    assert game["winner"] in (0, 1)
    # The winner scores the cards left in the other hand (all zeros score nothing, which a
    # deal now and then gives: "> 0" failed in CI on one).
    replay = alice_api.get(f"/api/games/{running_game['id']}/replay/").json()
    left = replay["final"]["hands"][1 - game["winner"]]
    assert left
    assert game["scores"][game["winner"]] == sum(POINTS[CODES.index(code)] for code in left)
    assert game["move_count"] == MoveRecord.objects.filter(game_id=game["id"]).count()


def test_two_api_clients_play_a_whole_match_to_a_low_target(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2, options={"target_score": 60})
    bob_api.post(f"/api/games/{game['id']}/join/")
    alice_api.post(f"/api/games/{game['id']}/start/")
    play_to_the_end([alice_api, bob_api], game["id"], seed=2)
    final = alice_api.get(f"/api/games/{game['id']}/").json()
    assert final["status"] == "finished"
    assert max(final["scores"]) >= 60


def test_the_view_shows_my_hand_and_the_version(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    body = _view(alice_api, running_game["id"])
    assert body["seat"] == 0
    assert body["version"] == running_game["version"]
    hand = body["view"]["hand"]
    assert len(hand) >= 7  # 9 when the first discard was a Draw Two against us
    assert body["view"]["hand_counts"][0] == len(hand)


def test_a_move_returns_my_new_view_and_the_record(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    response = _post(mover, gid, body["version"], body["view"]["legal_moves"][0])
    assert response.status_code == 201, response.content
    out = response.json()
    assert out["version"] > body["version"]
    assert out["played"]["number"] == 1
    assert out["played"]["source"] == "player"


def test_it_rejects_a_stale_version_with_the_current_one(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    response = _post(mover, gid, body["version"] - 1, body["view"]["legal_moves"][0])
    assert response.status_code == 409
    assert response.json() == {
        "code": "stale_version",
        "detail": response.json()["detail"],
        "version": body["version"],
    }


def test_it_rejects_a_version_the_game_has_not_reached_saying_so(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    _, mover, body = _awaited([alice_api, bob_api], gid)
    response = _post(mover, gid, body["version"] + 5, body["view"]["legal_moves"][0])
    assert response.status_code == 409
    assert response.json()["code"] == "stale_version"
    assert response.json()["version"] == body["version"]
    assert "not yet at" in response.json()["detail"]
    assert mover.get(f"/api/games/{gid}/").json()["version"] == body["version"]


def test_it_rejects_a_move_out_of_turn(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    seat = _view(alice_api, gid)["view"]["awaiting"]
    other = clients[1 - seat]
    body = _view(other, gid)
    response = _post(other, gid, body["version"], {"type": "draw"})
    assert response.status_code == 409
    assert response.json()["code"] == "not_your_turn"


def test_it_rejects_an_illegal_move_with_the_reason(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    response = _post(mover, gid, body["version"], {"type": "keep"})
    assert response.status_code == 422
    assert response.json()["code"] == "illegal_move"
    assert response.json()["detail"]
    assert Game.objects.get(pk=gid).version == body["version"]  # nothing applied


@pytest.mark.parametrize(
    "payload",
    [
        {"version": 0, "move": {"type": "fly"}},
        {"version": 0, "move": {"type": "play", "card": "R99"}},
        {"version": 0, "move": "draw"},
        {"version": 0, "move": {"type": "draw", "extra": 1}},
        {"version": 0},
        {"version": "x", "move": {"type": "draw"}},
        {"version": "7", "move": {"type": "draw"}},
        {"version": 0, "move": {"type": "draw"}, "wait": 5},
        {"move": {"type": "draw"}},
        {"version": True, "move": {"type": "draw"}},
        {"version": -1, "move": {"type": "draw"}},
        {"version": 0, "move": None},
        {"version": 0, "move": {"type": "draw", "color": None}},
        [],
    ],
)
def test_it_rejects_a_malformed_move_with_400(
    running_game: dict[str, Any], alice_api: APIClient, payload: Any
) -> None:
    gid = running_game["id"]
    if isinstance(payload, dict) and payload.get("version") == 0:
        payload["version"] = running_game["version"]
    response = alice_api.post(f"/api/games/{gid}/moves/", payload, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] in {"invalid", "malformed_move"}


@pytest.mark.parametrize("move", ['{"type": "draw", "target": 1e400}', '{"type": 1e400}'])
def test_a_move_holding_a_number_json_cannot_carry_is_invalid_not_judged(
    running_game: dict[str, Any], alice_api: APIClient, move: str
) -> None:
    """1e400 parses as infinity: the body is not JSON a move can be, whatever the engine
    would say of it."""
    gid = running_game["id"]
    body = f'{{"version": {running_game["version"]}, "move": {move}}}'
    response = alice_api.post(f"/api/games/{gid}/moves/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid" and "move" in response.json()["fields"]


def test_the_view_answers_304_to_a_matching_etag(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    gid = running_game["id"]
    first = alice_api.get(f"/api/games/{gid}/view/")
    etag = first["ETag"]
    assert etag == f'"{gid}-{running_game["version"]}-0"'
    again = alice_api.get(f"/api/games/{gid}/view/", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    anything = alice_api.get(f"/api/games/{gid}/view/", headers={"If-None-Match": "*"})
    assert (anything.status_code, anything["ETag"]) == (304, etag)


def test_the_etag_changes_after_a_move(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    etag = alice_api.get(f"/api/games/{gid}/view/")["ETag"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    _post(mover, gid, body["version"], body["view"]["legal_moves"][0])
    after = alice_api.get(f"/api/games/{gid}/view/", headers={"If-None-Match": etag})
    assert after.status_code == 200


def test_a_retried_move_with_the_same_idempotency_key_is_played_once(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    move = body["view"]["legal_moves"][0]
    first = _post(mover, gid, body["version"], move, **{"Idempotency-Key": "k-1"})
    second = _post(mover, gid, body["version"], move, **{"Idempotency-Key": "k-1"})
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second["Idempotent-Replayed"] == "true"
    assert MoveRecord.objects.filter(game_id=gid).count() == 1


def test_an_idempotency_key_reused_for_another_request_is_refused(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    _, mover, body = _awaited(clients, gid)
    _post(mover, gid, body["version"], body["view"]["legal_moves"][0],
          **{"Idempotency-Key": "k-2"})
    again = _post(mover, gid, body["version"] + 5, {"type": "draw"},
                  **{"Idempotency-Key": "k-2"})
    assert again.status_code == 422
    assert again.json()["code"] == "idempotency_key_reused"


def test_a_refused_move_is_not_remembered_so_its_key_serves_the_corrected_one(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    _, mover, body = _awaited([alice_api, bob_api], gid)
    key = {"Idempotency-Key": "k-3"}
    refused = _post(mover, gid, body["version"], {"type": "play", "card": "X"}, **key)
    assert refused.status_code == 400
    again = _post(mover, gid, body["version"], {"type": "play", "card": "X"}, **key)
    assert again.status_code == 400 and "Idempotent-Replayed" not in again
    move = body["view"]["legal_moves"][0]
    played = _post(mover, gid, body["version"], move, **key)
    assert played.status_code == 201
    assert _post(mover, gid, body["version"], move, **key)["Idempotent-Replayed"] == "true"
    assert MoveRecord.objects.filter(game_id=gid).count() == 1


@pytest.mark.parametrize("key", ["", " ", "k" * 256])
def test_a_blank_or_overlong_idempotency_key_is_a_400(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient, key: str
) -> None:
    gid = running_game["id"]
    _, mover, body = _awaited([alice_api, bob_api], gid)
    response = _post(mover, gid, body["version"], body["view"]["legal_moves"][0],
                     **{"Idempotency-Key": key})
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["fields"]
    assert not MoveRecord.objects.filter(game_id=gid).exists()


def test_an_idempotency_key_is_forgotten_after_a_day(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    gid = running_game["id"]
    seat, mover, body = _awaited([alice_api, bob_api], gid)
    user = Game.objects.get(pk=gid).seats.get(index=seat).user
    old = IdempotencyRecord.objects.create(user=user, key="k-4", fingerprint="another request",
                                           status_code=201, response_body={})
    IdempotencyRecord.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - KEY_LIFETIME
    )
    reused = _post(mover, gid, body["version"], body["view"]["legal_moves"][0],
                   **{"Idempotency-Key": "k-4"})
    assert reused.status_code == 201 and "Idempotent-Replayed" not in reused
    assert not IdempotencyRecord.objects.filter(pk=old.pk).exists()


def test_the_move_log_is_public_and_numbered(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient,
    charlie_api: APIClient,
) -> None:
    gid = running_game["id"]
    clients = [alice_api, bob_api]
    for _ in range(3):
        _, mover, body = _awaited(clients, gid)
        _post(mover, gid, body["version"], body["view"]["legal_moves"][-1])
    log = charlie_api.get(f"/api/games/{gid}/moves/").json()
    assert [m["number"] for m in log["results"]] == [1, 2, 3]


def test_moves_on_a_game_that_is_not_running_are_refused(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2)
    response = _post(alice_api, game["id"], game["version"], {"type": "draw"})
    assert response.status_code == 409
    assert response.json()["code"] == "game_not_running"


def test_the_service_refuses_a_move_for_a_seat_that_is_not_awaited(
    running_game: dict[str, Any],
) -> None:
    game = Game.objects.get(pk=running_game["id"])
    idle = 1 - game.awaiting
    with pytest.raises(NotYourTurn):
        services.move_play(
            game_id=game.pk, seat=idle, move={"type": "draw"}, expected_version=game.version
        )


def test_moves_are_rate_limited(
    running_game: dict[str, Any], alice_api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"move": "2/minute"})
    gid = running_game["id"]
    codes = [_post(alice_api, gid, 0, {"type": "draw"}).status_code for _ in range(3)]
    assert codes[:2] != [429, 429] and codes[2] == 429
    assert alice_api.get(f"/api/games/{gid}/moves/").status_code == 200  # reads are not


def test_two_api_clients_play_a_full_default_match_to_500(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2)
    assert game["options"]["target_score"] == 500 and not game["options"]["single_hand"]
    bob_api.post(f"/api/games/{game['id']}/join/")
    alice_api.post(f"/api/games/{game['id']}/start/")
    play_to_the_end([alice_api, bob_api], game["id"], seed=5, max_moves=20_000)
    final = alice_api.get(f"/api/games/{game['id']}/").json()
    assert final["status"] == "finished" and final["end_reason"] == "match"
    assert final["scores"][final["winner"]] >= 500
    assert final["hand_number"] > 1
