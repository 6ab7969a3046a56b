"""``core.migrations.AddIndexWithoutLocking`` on PostgreSQL: the index is built concurrently,
with no lock timeout to cut it short, and one that a failed build left invalid is dropped and
built again, so the migration can always be run again."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, models
from django.db.migrations.state import ProjectState

from core.migrations import AddIndexWithoutLocking
from tests.games.conftest import create_game

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NAME = "probe_event_kind"


def valid(name: str) -> bool | None:
    """Whether the index is valid; None if there is none."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                       [name])
        found = cursor.fetchone()
    return None if found is None else bool(found[0])


def lock_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        return str(cursor.fetchone()[0])


def test_an_index_a_failed_build_left_invalid_is_built_again(alice_api: Any,
                                                             bob_api: Any) -> None:
    game = create_game(alice_api)
    assert bob_api.post(f"/api/games/{game['id']}/join/").status_code == 200  # two events
    with connection.cursor() as cursor, pytest.raises(IntegrityError):  # one game: ids repeat
        cursor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {NAME} ON games_gameevent (game_id)")
    assert valid(NAME) is False
    before = lock_timeout()
    operation = AddIndexWithoutLocking(
        model_name="gameevent", index=models.Index(fields=["kind"], name=NAME))
    state = ProjectState.from_apps(apps)
    after = state.clone()
    operation.state_forwards("games", after)

    with connection.schema_editor(atomic=False) as editor:
        operation.database_forwards("games", editor, state, after)
    assert valid(NAME) is True
    assert lock_timeout() == before  # the connection's own again

    with connection.schema_editor(atomic=False) as editor:
        operation.database_backwards("games", editor, after, state)
    assert valid(NAME) is None


def test_a_foreign_keys_index_is_dropped_and_built_again_without_locking() -> None:
    from core.migrations import drop_index_without_locking

    name = "probe_event_game"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX {name} ON games_gameevent (game_id)")
    operation = drop_index_without_locking("games_gameevent", name)

    with connection.schema_editor(atomic=False) as editor:
        operation.code(apps, editor)
    assert valid(name) is None
    with connection.schema_editor(atomic=False) as editor:
        operation.reverse_code(apps, editor)  # type: ignore[misc]
    assert valid(name) is True
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
