"""The games admin's game page: the move log as a table of who played what, each card a
coloured chip with its name as text, and the replay as a staff-only JSON download."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from games.cards_display import card_face, color_face
from games.models import Game
from tests.arena.admin_fixtures import finished_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_quick")]


@pytest.fixture
def game(alice: Any, bob: Any) -> Game:
    return finished_game(alice, bob, seed=3)


def test_cards_read_as_their_colour_and_name() -> None:
    assert (card_face("R5").color, card_face("R5").face, card_face("R5").name) == (
        "red", "5", "red 5")
    assert (card_face("YS").color, card_face("YS").face, card_face("YS").name) == (
        "yellow", "Skip", "yellow Skip")
    assert (card_face("BD").face, card_face("BD").name) == ("+2", "blue Draw Two")
    assert (card_face("W4").color, card_face("W4").name) == ("wild", "Wild Draw Four")
    assert card_face("??").color == "unknown"  # never an error on a page
    assert color_face("green").color == "green"


def test_the_game_page_shows_the_move_log_with_players_and_coloured_cards(
    staff: Client, game: Game
) -> None:
    page = staff.get(f"/admin/games/game/{game.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="move-log"' in html
    assert "/static/games/cards.css" in html
    moves = list(game.moves.order_by("number"))
    assert f"{len(moves)} move" in html
    plays = [m.move for m in moves if m.move["type"] == "play"]
    assert plays, "a finished game has card plays"
    for move in plays[:5]:
        face = card_face(move["card"])
        # The chip in its colour, the full name as text for screen readers.
        assert f'class="uno-card uno-{face.color}" title="{face.name}"' in html
        assert f'<span class="uno-sr">{face.name}</span>' in html
    # Who played: the players' names, one per seat.
    assert "<td>alice</td>" in html and "<td>bob</td>" in html
    assert "played" in html


def test_staff_download_the_replay_as_a_json_attachment(staff: Client, game: Game) -> None:
    page = staff.get(f"/admin/games/game/{game.pk}/change/").content.decode()
    url = f"/admin/games/game/{game.pk}/replay.json"
    assert f'href="{url}"' in page
    response = staff.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="game-{game.pk}-replay.json"'
    replay = json.loads(response.content)
    assert replay["game"] == game.pk and replay["players"] == ["alice", "bob"]
    assert len(replay["moves"]) == game.moves.count()
    assert replay["seed"] == game.seed  # over: the seed is no secret any more


def test_the_admins_replay_file_is_the_apis_byte_for_byte(
    staff: Client, alice: Any, game: Game
) -> None:
    """Times to the microsecond in both (the admin's once cut them to milliseconds)."""
    api = Client()
    api.force_login(alice)
    from_api = api.get(f"/api/games/{game.pk}/replay/")
    assert from_api.status_code == 200
    from_admin = staff.get(f"/admin/games/game/{game.pk}/replay.json")
    assert from_admin.content == from_api.content
    assert "." in json.loads(from_admin.content)["moves"][0]["created_at"]


def test_a_running_game_has_no_replay_to_download(staff: Client, alice: Any, bob: Any) -> None:
    from games import services

    running = services.game_create(user=alice, options={"single_hand": True}, seats=2)
    services.seat_join(game_id=running.pk, user=bob)
    services.game_start(game_id=running.pk, user=alice)
    assert staff.get(f"/admin/games/game/{running.pk}/replay.json").status_code == 404
    page = staff.get(f"/admin/games/game/{running.pk}/change/").content.decode()
    assert "available once the game is over" in page


@pytest.mark.parametrize("path", ["change/", "replay.json"])
def test_a_signed_in_player_who_is_not_staff_gets_neither_page_nor_replay(
    alice: Any, game: Game, path: str
) -> None:
    client = Client()
    client.force_login(alice)  # she played this game, but the admin is for staff
    response = client.get(f"/admin/games/game/{game.pk}/{path}")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.parametrize("path", ["change/", "replay.json"])
def test_anonymous_visitors_are_sent_to_the_login(game: Game, path: str) -> None:
    response = Client().get(f"/admin/games/game/{game.pk}/{path}")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
