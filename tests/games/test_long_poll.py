"""Long polls wake when their game changes: in this process on commit, across processes via
PostgreSQL NOTIFY. The periodic re-check is only a safety net."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import notify

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _both_servings(serving: str) -> None:
    """Every test here runs against both ways of serving a wait (see ``serving``)."""


def view(client: APIClient, game_id: int, **headers: str) -> Any:
    return client.get(f"/api/games/{game_id}/view/", **headers)


def awaited_client(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> tuple[APIClient, APIClient, Any]:
    game_id = running_game["id"]
    mine = view(alice_api, game_id).json()
    if mine["view"]["awaiting"] == 0:
        return alice_api, bob_api, mine
    return bob_api, alice_api, view(bob_api, game_id).json()


def test_a_waiter_is_woken_with_the_new_version_whose_turn_it_is_and_the_status(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    mover, _, mine = awaited_client(running_game, alice_api, bob_api)
    with notify.subscription(running_game["id"]) as changes:
        response = mover.post(
            f"/api/games/{running_game['id']}/moves/",
            {"version": mine["version"], "move": mine["view"]["legal_moves"][0]},
            format="json",
        )
        body = response.json()
        assert changes.wait(5), "the commit did not wake the subscriber"
        assert changes.take() == notify.Change(
            version=body["version"], awaiting=body["view"]["awaiting"], status=body["status"]
        )
        assert not changes.is_set()
        assert changes.take() is None


def test_a_subscription_keeps_the_newest_change_and_an_unknown_one_until_taken() -> None:
    with notify.subscription(77) as changes:
        notify._wake(77, notify.Change(version=5, awaiting=1, status="running"))
        notify._wake(77, notify.Change(version=4, awaiting=0, status="running"))
        assert changes.take() == notify.Change(version=5, awaiting=1, status="running")
        notify._wake(77, notify.Change())
        notify._wake(77, notify.Change(version=9, awaiting=0, status="running"))
        assert changes.take() == notify.Change()


def test_a_subscription_is_not_woken_by_changes_its_waiter_does_not_want() -> None:
    with notify.subscription(78) as changes:
        changes.want(lambda change: change.version is not None and change.version > 5)
        notify._wake(78, notify.Change(version=5, awaiting=1, status="running"))  # its own
        assert not changes.is_set() and changes.take() is None
        notify._wake(78, notify.Change())  # says nothing: the waiter must look
        assert changes.take() == notify.Change()
        notify._wake(78, notify.Change(version=6, awaiting=0, status="running"))
        assert changes.is_set()
        assert changes.take() == notify.Change(version=6, awaiting=0, status="running")


@pytest.mark.parametrize(
    ("payload", "parsed"),
    [
        ("12 40 1 running", (12, notify.Change(version=40, awaiting=1, status="running"))),
        ("12 41 - finished", (12, notify.Change(version=41, awaiting=None, status="finished"))),
        ("12", (12, notify.Change())),  # the trigger before migration 0004
        ("12 x y", (12, notify.Change())),
        ("hello", None),
        ("", None),
    ],
)
def test_notification_payloads_are_parsed_leniently(
    payload: str, parsed: tuple[int, notify.Change] | None
) -> None:
    assert notify.Change.from_payload(payload) == parsed


def test_a_waiter_is_not_woken_by_another_game(running_game: dict[str, Any]) -> None:
    with notify.subscription(running_game["id"] + 1000) as changed:
        notify._wake(running_game["id"])
        assert not changed.is_set()


@pytest.mark.postgres
def test_a_waiter_is_woken_by_a_notification_from_another_connection() -> None:
    params = connection.get_connection_params()
    with notify.subscription(424242) as changed:
        with psycopg.connect(**params, autocommit=True) as other:
            # The listener may still be connecting: notify until it hears (bounded).
            for _ in range(50):
                other.execute("SELECT pg_notify(%s, %s)", [notify.CHANNEL, "424242"])
                if changed.wait(0.2):
                    break
        assert changed.is_set()


def test_the_view_long_poll_answers_as_soon_as_the_opponent_moves(
    running_game: dict[str, Any], alice_api: APIClient, bob_api: APIClient
) -> None:
    game_id = running_game["id"]
    mover, waiter, mine = awaited_client(running_game, alice_api, bob_api)
    etag = view(waiter, game_id)["ETag"]
    answer: dict[str, Any] = {}

    def wait_for_change() -> None:
        try:
            response = waiter.get(f"/api/games/{game_id}/view/?wait=20", HTTP_IF_NONE_MATCH=etag)
            answer["status"] = response.status_code
            answer["body"] = response.json() if response.status_code == 200 else None
        finally:
            connection.close()

    thread = threading.Thread(target=wait_for_change)
    thread.start()
    moved = mover.post(
        f"/api/games/{game_id}/moves/",
        {"version": mine["version"], "move": mine["view"]["legal_moves"][0]},
        format="json",
    )
    assert moved.status_code == 201
    thread.join(30)
    assert answer["status"] == 200
    assert answer["body"]["version"] > mine["version"]


def test_the_view_long_poll_answers_304_when_nothing_changes(
    running_game: dict[str, Any], alice_api: APIClient, fake_clock: Any
) -> None:
    game_id = running_game["id"]
    first = view(alice_api, game_id)
    again = alice_api.get(f"/api/games/{game_id}/view/?wait=5", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert again["ETag"] == first["ETag"]


def test_a_view_wait_without_an_etag_answers_at_once(
    running_game: dict[str, Any], alice_api: APIClient
) -> None:
    response = alice_api.get(f"/api/games/{running_game['id']}/view/?wait=25")
    assert response.status_code == 200


@pytest.mark.parametrize("wait", ["-1", "26", "soon"])
def test_a_malformed_view_wait_is_a_400(
    running_game: dict[str, Any], alice_api: APIClient, wait: str
) -> None:
    response = alice_api.get(f"/api/games/{running_game['id']}/view/?wait={wait}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


@pytest.mark.postgres
def test_a_committed_version_change_is_notified_to_other_processes(
    running_game: dict[str, Any],
) -> None:
    from django.db.models import F

    from games.models import Game

    game_id = running_game["id"]
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as listener:
        listener.execute(f"LISTEN {notify.CHANNEL}")
        Game.objects.filter(pk=game_id).update(version=F("version") + 1)
        notes = list(listener.notifies(timeout=5, stop_after=1))
    game = Game.objects.get(pk=game_id)
    assert [note.payload.split(" ", 4)[:4] for note in notes] == [
        [str(game_id), str(game.version), str(game.awaiting), "running"]
    ]  # then the row (tests/games/test_notified_row.py)
    assert notify.Change.from_payload(notes[0].payload) == (
        game_id, notify.Change(version=game.version, awaiting=game.awaiting, status="running")
    )


@pytest.mark.postgres
def test_a_rolled_back_change_is_not_notified(running_game: dict[str, Any]) -> None:
    from django.db import transaction
    from django.db.models import F

    from games.models import Game

    class Rollback(Exception):
        pass

    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as listener:
        listener.execute(f"LISTEN {notify.CHANNEL}")
        with pytest.raises(Rollback), transaction.atomic():
            Game.objects.filter(pk=running_game["id"]).update(version=F("version") + 1)
            raise Rollback
        assert list(listener.notifies(timeout=0.5)) == []
