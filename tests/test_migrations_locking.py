"""An upgrade does not stop play: every index the project's migrations add to a table that
already exists is built without locking it on PostgreSQL (``core.migrations.
AddIndexWithoutLocking``), as a self-hoster's tables hold a year of moves when they upgrade.
An index added in the migration that creates its table is built on an empty table."""

from __future__ import annotations

from django.db import migrations
from django.db.migrations.loader import MigrationLoader

from core.migrations import AddIndexWithoutLocking

APPS = ("games", "bots", "arena")


def _migrations() -> list[migrations.Migration]:
    loader = MigrationLoader(None, ignore_no_migrations=True)  # the files, not the database
    return [m for (app, _), m in sorted(loader.disk_migrations.items()) if app in APPS]


def test_every_index_added_to_an_existing_table_is_built_without_locking_it() -> None:
    locking = []
    for migration in _migrations():
        created = {op.name.lower() for op in migration.operations
                   if isinstance(op, migrations.CreateModel)}
        for op in migration.operations:
            if (isinstance(op, migrations.AddIndex)
                    and not isinstance(op, AddIndexWithoutLocking)
                    and op.model_name.lower() not in created):
                locking.append(f"{migration.app_label}.{migration.name}: {op.index.name}")
    assert locking == []


def test_a_migration_that_builds_an_index_concurrently_runs_outside_a_transaction() -> None:
    inside = [f"{m.app_label}.{m.name}" for m in _migrations()
              if m.atomic and any(isinstance(op, AddIndexWithoutLocking) for op in m.operations)]
    assert inside == []
