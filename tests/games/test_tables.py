"""Tables: create, join, leave, start, list and filter; and what charlie (no seat) gets."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameStatus
from tests.games.conftest import create_game

pytestmark = pytest.mark.django_db


def test_alice_creates_a_game_and_takes_seat_zero(alice_api: APIClient) -> None:
    game = create_game(alice_api, seats=3, options={"stacking": True}, turn_seconds=30)
    assert game["status"] == "open"
    assert game["my_seat"] == 0
    assert game["open_seats"] == 2
    assert [s["player"] for s in game["seats"]] == ["alice", None, None]
    assert game["options"]["players"] == 3 and game["options"]["stacking"] is True
    assert game["turn_seconds"] == 30 and game["max_strikes"] == 3
    assert "seed" not in game and "state" not in game


def test_a_game_can_be_created_without_joining_it(alice_api: APIClient) -> None:
    game = create_game(alice_api, seats=2, join=False)
    assert game["my_seat"] is None and game["open_seats"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"options": {"stacking": "yes"}}, "options.stacking"),
        ({"options": {"target_score": 0}}, "options.target_score"),
        ({"options": {"flying": True}}, "options.flying"),
        ({"options": {"players": 11}}, "options.players"),
        ({"seats": 11}, "seats"),
        ({"seats": 1}, "seats"),
        ({"seats": 3, "options": {"players": 4}}, "options.players"),
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"options": []}, "options"),
    ],
)
def test_a_bad_option_is_a_400_naming_the_field(
    alice_api: APIClient, body: dict[str, Any], field: str
) -> None:
    response = alice_api.post("/api/games/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    assert field in response.json()["fields"], response.json()
    assert not Game.objects.exists()


def test_bob_joins_and_alice_starts(alice_api: APIClient, bob_api: APIClient) -> None:
    game = create_game(alice_api, seats=2)
    joined = bob_api.post(f"/api/games/{game['id']}/join/")
    assert joined.status_code == 200
    assert joined.json()["my_seat"] == 1
    started = alice_api.post(f"/api/games/{game['id']}/start/")
    assert started.status_code == 200
    assert started.json()["status"] == "running"
    assert started.json()["awaiting"] in (0, 1)
    assert started.json()["turn_deadline"] is not None


def test_a_specific_free_seat_can_be_chosen(alice_api: APIClient, bob_api: APIClient) -> None:
    game = create_game(alice_api, seats=4)
    assert bob_api.post(f"/api/games/{game['id']}/join/", {"seat": 3}).json()["my_seat"] == 3


def test_joining_a_seat_the_table_lacks_or_a_malformed_join_is_a_400_naming_it(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    url = f"/api/games/{create_game(alice_api, seats=2)['id']}/join/"
    for body, field in (({"seat": 5}, "seat"), ({"seat": "1"}, "seat"), ({"sit": 1}, "sit")):
        response = bob_api.post(url, body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["fields"]
    assert bob_api.post(url, {"seat": 1}, format="json").json()["my_seat"] == 1


def test_joining_twice_or_a_taken_seat_or_a_full_game_is_a_409(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2)
    url = f"/api/games/{game['id']}/join/"
    assert alice_api.post(url).json()["code"] == "already_seated"
    assert bob_api.post(url, {"seat": 0}).json()["code"] == "seat_taken"
    bob_api.post(url)
    full = charlie_api.post(url)
    assert full.status_code == 409 and full.json()["code"] in {"game_full", "game_not_open"}


def test_only_the_creator_starts_and_only_with_every_seat_taken(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2)
    url = f"/api/games/{game['id']}/start/"
    early = alice_api.post(url)
    assert early.status_code == 409 and early.json()["code"] == "seats_open"
    bob_api.post(f"/api/games/{game['id']}/join/")
    not_creator = bob_api.post(url)
    assert not_creator.status_code == 403 and not_creator.json()["code"] == "not_creator"
    assert alice_api.post(url).status_code == 200
    again = alice_api.post(url)
    assert again.status_code == 409 and again.json()["code"] == "game_not_open"


def test_a_player_can_leave_before_the_start_but_not_after(
    alice_api: APIClient, bob_api: APIClient
) -> None:
    game = create_game(alice_api, seats=2)
    bob_api.post(f"/api/games/{game['id']}/join/")
    left = bob_api.post(f"/api/games/{game['id']}/leave/")
    assert left.status_code == 200 and left.json()["my_seat"] is None
    bob_api.post(f"/api/games/{game['id']}/join/")
    alice_api.post(f"/api/games/{game['id']}/start/")
    late = bob_api.post(f"/api/games/{game['id']}/leave/")
    assert late.status_code == 409 and late.json()["code"] == "game_not_open"


@pytest.mark.django_db(transaction=True)  # committed reads: the process remembers them
def test_a_player_who_left_cannot_play_the_seat_someone_else_took(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient
) -> None:
    """bob leaves seat 1 after looking at the table; charlie takes it; bob, who can still
    read the public version, sends moves for it: refused, whoever is awaited."""
    game_id = create_game(alice_api, seats=2, options={"single_hand": True})["id"]
    bob_api.post(f"/api/games/{game_id}/join/")
    assert bob_api.get(f"/api/games/{game_id}/view/").status_code == 200
    bob_api.post(f"/api/games/{game_id}/leave/")
    charlie_api.post(f"/api/games/{game_id}/join/")
    alice_api.post(f"/api/games/{game_id}/start/")
    alices = alice_api.get(f"/api/games/{game_id}/view/").json()  # read at the newest version
    version = alice_api.get(f"/api/games/{game_id}/").json()["version"]
    assert alices["version"] == version
    for move in ({"type": "draw"}, {"type": "catch", "target": 0}):
        response = bob_api.post(f"/api/games/{game_id}/moves/",
                                {"version": version, "move": move}, format="json")
        assert response.status_code == 403, response.content
        assert "view" not in response.json()
    assert not Game.objects.get(pk=game_id).moves.exists()


def test_when_the_last_player_leaves_the_table_is_aborted(alice_api: APIClient) -> None:
    game = create_game(alice_api, seats=2)
    assert alice_api.post(f"/api/games/{game['id']}/leave/").json()["status"] == "aborted"


def test_games_are_listed_newest_first_and_paginated(alice_api: APIClient) -> None:
    ids = [create_game(alice_api, seats=2)["id"] for _ in range(3)]
    page = alice_api.get("/api/games/", {"page_size": 2}).json()
    assert page["count"] == 3
    assert [g["id"] for g in page["results"]] == ids[::-1][:2]
    assert page["next"]


def test_games_are_filtered_by_status_mine_and_open_seats(
    alice_api: APIClient, bob_api: APIClient, charlie_api: APIClient
) -> None:
    mine_open = create_game(alice_api, seats=2)["id"]
    full = create_game(alice_api, seats=2)["id"]
    bob_api.post(f"/api/games/{full}/join/")
    alice_api.post(f"/api/games/{full}/start/")
    bobs = create_game(bob_api, seats=3)["id"]

    def ids(client: APIClient, **query: str) -> set[int]:
        response = client.get("/api/games/", query)
        assert response.status_code == 200, response.content
        return {g["id"] for g in response.json()["results"]}

    assert ids(alice_api, status="running") == {full}
    assert ids(alice_api, mine="true") == {mine_open, full}
    assert ids(charlie_api, mine="true") == set()
    assert ids(charlie_api, open_seats="true") == {mine_open, bobs}
    assert ids(charlie_api, status="open", open_seats="true", mine="false") == {mine_open, bobs}
    assert alice_api.get("/api/games/", {"status": "sleeping"}).status_code == 400
    # 1 and 0 are booleans too, as on every other list (they were read as "no filter").
    assert ids(alice_api, mine="1") == {mine_open, full}
    assert ids(charlie_api, open_seats="1") == {mine_open, bobs}
    assert ids(charlie_api, open_seats="True", mine="0") == {mine_open, bobs}


def test_anonymous_requests_are_401(client: Any, alice_api: APIClient) -> None:
    game = create_game(alice_api, seats=2)
    anonymous = APIClient()
    for url in ("/api/games/", f"/api/games/{game['id']}/", f"/api/games/{game['id']}/view/"):
        response = anonymous.get(url)
        assert response.status_code == 401
        assert response.json()["code"] == "not_authenticated"


def test_an_unknown_game_is_a_404_in_the_error_shape(alice_api: APIClient) -> None:
    response = alice_api.get("/api/games/999999/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


SEAT_SPECIFIC = [
    ("get", "view/"),
    ("post", "moves/"),
    ("post", "leave/"),
    ("post", "start/"),
    ("get", "replay/"),
]


@pytest.mark.parametrize(("method", "suffix"), SEAT_SPECIFIC)
def test_charlie_without_a_seat_gets_403_or_404_on_every_seat_specific_endpoint(
    running_game: dict[str, Any], charlie_api: APIClient, method: str, suffix: str
) -> None:
    url = f"/api/games/{running_game['id']}/{suffix}"
    # Each operation's own well-formed body (leave and start take none).
    body = {"version": running_game["version"], "move": {"type": "draw"}} if (
        suffix == "moves/") else {}
    response = charlie_api.post(url, body, format="json") if method == "post" else (
        charlie_api.get(url)
    )
    assert response.status_code in (403, 404), response.content
    assert "hand" not in response.content.decode()


def test_charlie_sees_public_facts_of_a_running_game_but_no_hand(
    running_game: dict[str, Any], charlie_api: APIClient
) -> None:
    gid = running_game["id"]
    for url in (f"/api/games/{gid}/", f"/api/games/{gid}/events/", f"/api/games/{gid}/moves/",
                "/api/games/"):
        response = charlie_api.get(url)
        assert response.status_code == 200
        text = response.content.decode()
        assert '"hand"' not in text and '"hands"' not in text and '"seed"' not in text
    assert Game.objects.get(pk=gid).status == GameStatus.RUNNING


def test_unknown_api_paths_and_non_numeric_ids_are_json_404s(alice_api: APIClient) -> None:
    for url in ("/api/nothing/", "/api/games/abc/", "/api/games/1/fly/"):
        response = alice_api.post(url, {}, format="json")
        assert response.status_code == 404, url
        assert response.json()["code"] == "not_found"


def test_form_encoded_bodies_are_refused_with_415(alice_api: APIClient) -> None:
    response = alice_api.post("/api/games/", {"seats": "2"}, format="multipart")
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_the_answers_to_table_changes_are_what_the_game_detail_serializer_says(
    alice: Any, bob: Any, charlie: Any, alice_api: APIClient, bob_api: APIClient
) -> None:
    """Create, join, leave and start answer with ``game_out_data``, built without the
    serializer: the same JSON as ``GameOut``, for every phase and whoever asks."""
    import json

    from rest_framework.renderers import JSONRenderer

    from games import selectors
    from games.serializers import GameOut, game_out_data
    from tests.games.conftest import play_to_the_end

    def same_for_everyone(game_id: int) -> None:
        game, creator, seats = selectors.game_after_change(game_id=game_id)
        for user in (alice, bob, charlie, None):
            request = type("Request", (), {"user": user})()
            expected = GameOut(selectors.game_get(game_id=game_id), context={"request": request})
            built = game_out_data(game, creator, seats, user.pk if user else None)
            assert json.loads(JSONRenderer().render(built)) == json.loads(
                JSONRenderer().render(expected.data)
            )

    open_table = create_game(alice_api, seats=3, join=False)
    same_for_everyone(open_table["id"])
    game = create_game(alice_api, seats=2)
    same_for_everyone(game["id"])
    bob_api.post(f"/api/games/{game['id']}/join/")
    same_for_everyone(game["id"])
    alice_api.post(f"/api/games/{game['id']}/start/")
    same_for_everyone(game["id"])
    play_to_the_end([alice_api, bob_api], game["id"], seed=3)
    same_for_everyone(game["id"])
    left = create_game(alice_api, seats=2)
    alice_api.post(f"/api/games/{left['id']}/leave/")  # the last player: aborted
    same_for_everyone(left["id"])
