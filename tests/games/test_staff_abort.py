"""Staff end a stuck or unwanted table from the admin; the move log stays append-only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from games import services
from games.errors import GameNotRunning
from games.models import EventKind, Game, GameStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client: Client, django_user_model: Any) -> Client:
    root = django_user_model.objects.create_superuser("root", password="root-password-1")
    client.force_login(root)
    return client


def _abort_from_the_admin(staff: Client, *game_ids: int) -> Any:
    return staff.post(
        "/admin/games/game/",
        {"action": "abort", "_selected_action": [str(i) for i in game_ids]},
        follow=True,
    )


def test_staff_abort_a_running_game_and_its_players_see_it_over(
    staff: Client, alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    game_id = running_game["id"]
    before = Game.objects.get(pk=game_id).version

    page = _abort_from_the_admin(staff, game_id)

    assert b"Aborted 1 game(s)." in page.content
    game = Game.objects.get(pk=game_id)
    assert (game.status, game.end_reason) == (GameStatus.ABORTED, "staff")
    assert game.version == before + 1 and game.awaiting is None and game.turn_deadline is None
    assert game.events.order_by("version").last().kind == EventKind.ABORTED
    view = alice_api.get(f"/api/games/{game_id}/view/").json()
    assert (view["status"], view["version"]) == ("aborted", before + 1)
    assert view["view"]["legal_moves"] == [] and view["view"]["awaiting"] is None
    assert view["view"]["winner"] is None
    assert alice_api.get(f"/api/games/{game_id}/replay/").status_code == 200


def test_a_move_after_the_abort_is_refused(
    staff: Client, alice_api: APIClient, bob_api: APIClient, running_game: dict[str, Any]
) -> None:
    game_id = running_game["id"]
    views = [c.get(f"/api/games/{game_id}/view/").json() for c in (alice_api, bob_api)]
    mover = next(i for i, v in enumerate(views) if v["view"]["awaiting"] == v["seat"])
    _abort_from_the_admin(staff, game_id)
    move = views[mover]["view"]["legal_moves"][0]
    response = (alice_api, bob_api)[mover].post(
        f"/api/games/{game_id}/moves/", {"version": views[mover]["version"], "move": move},
        format="json",
    )
    assert response.status_code == 409
    assert Game.objects.get(pk=game_id).moves.count() == 0


def test_aborting_a_game_that_is_over_changes_nothing(
    staff: Client, running_game: dict[str, Any]
) -> None:
    game_id = running_game["id"]
    services.game_abort(game_id=game_id)
    version = Game.objects.get(pk=game_id).version

    page = _abort_from_the_admin(staff, game_id)

    assert b"1 game(s) were already over." in page.content
    assert Game.objects.get(pk=game_id).version == version
    with pytest.raises(GameNotRunning):
        services.game_abort(game_id=game_id)


def test_an_open_table_can_be_aborted(alice: Any) -> None:
    game = services.game_create(user=alice, options={}, seats=3)
    assert services.game_abort(game_id=game.pk).status == GameStatus.ABORTED


def test_the_move_log_and_events_cannot_be_changed_in_the_admin(
    staff: Client, alice_api: APIClient, running_game: dict[str, Any]
) -> None:
    event = Game.objects.get(pk=running_game["id"]).events.first()
    assert staff.get("/admin/games/moverecord/add/").status_code == 403
    assert staff.get("/admin/games/gameevent/add/").status_code == 403
    assert staff.get(f"/admin/games/gameevent/{event.pk}/delete/").status_code == 403


def test_staff_without_the_abort_permission_cannot_abort(
    client: Client, django_user_model: Any, running_game: dict[str, Any]
) -> None:
    from django.contrib.auth.models import Permission

    viewer = django_user_model.objects.create_user("viewer", password="viewer-password-1",
                                                   is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_game"))
    client.force_login(viewer)
    assert b"Abort the selected games" not in client.get("/admin/games/game/").content
    _abort_from_the_admin(client, running_game["id"])
    assert Game.objects.get(pk=running_game["id"]).status == GameStatus.RUNNING
    viewer.user_permissions.add(Permission.objects.get(codename="abort_game"))
    viewer = django_user_model.objects.get(pk=viewer.pk)  # permissions are cached per object
    client.force_login(viewer)
    _abort_from_the_admin(client, running_game["id"])
    assert Game.objects.get(pk=running_game["id"]).status == GameStatus.ABORTED
