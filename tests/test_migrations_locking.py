"""An upgrade does not stop play: every index the project's migrations add to a table that
already exists is built without locking it on PostgreSQL (``core.migrations.
AddIndexWithoutLocking``), as a self-hoster's tables hold a year of moves when they upgrade.
An index added in the migration that creates its table is built on an empty table."""

from __future__ import annotations

from django.db import migrations
from django.db.migrations.loader import MigrationLoader

from core.migrations import AddIndexWithoutLocking

APPS = ("games", "bots", "arena")


def _loader() -> MigrationLoader:
    return MigrationLoader(None, ignore_no_migrations=True)  # the files, not the database


def _migrations() -> list[migrations.Migration]:
    return [m for (app, _), m in sorted(_loader().disk_migrations.items()) if app in APPS]


def _gains_an_index(migration: migrations.Migration, op: migrations.AlterField) -> bool:
    """Whether the altered field is indexed (or unique) where it was not before."""
    before = _loader().project_state((migration.app_label, migration.name), at_end=False)
    old = before.models[migration.app_label, op.model_name_lower].fields[op.name]
    return bool((op.field.db_index and not old.db_index) or (op.field.unique and not old.unique))


# Written in the project's first days, before anyone ran a ladder on it: from a deployment that
# predates it, the upgrade holds games_seat's write lock while it adds the bot seats' column,
# their foreign key and index, and checks every seat (docs/reliability.md says so).
LOCKS_KNOWN = {"games.0007_seat_bot"}


def _locking(migration: migrations.Migration) -> list[str]:
    """The operations of ``migration`` that build an index, or check every row, of a table
    that already exists, holding its write lock meanwhile."""
    created = {op.name.lower() for op in migration.operations
               if isinstance(op, migrations.CreateModel)}
    found = []
    for op in migration.operations:
        if getattr(op, "model_name", "").lower() in created:
            continue  # the table is new: empty
        if isinstance(op, migrations.AddIndex) and not isinstance(op, AddIndexWithoutLocking):
            found.append(f"index {op.index.name}")
        elif isinstance(op, migrations.AddConstraint):
            found.append(f"constraint {op.constraint.name}")
        elif isinstance(op, migrations.AddField) and (
                op.field.db_index or op.field.unique or op.field.is_relation):
            found.append(f"field {op.name} (its index, or its foreign key checked)")
        elif isinstance(op, migrations.AlterField) and _gains_an_index(migration, op):
            found.append(f"field {op.name} (the index it gains)")
        elif isinstance(op, migrations.AlterUniqueTogether | migrations.AlterIndexTogether):
            found.append(f"{op.option_name} of {op.name}")
        elif isinstance(op, migrations.RunSQL) and _builds_an_index(op.sql):
            found.append("an index in SQL of its own")
    return found


def _builds_an_index(sql: object) -> bool:
    text = " ".join(sql if isinstance(sql, list | tuple) else [sql]).upper()
    return "CREATE" in text and "INDEX" in text and "CONCURRENTLY" not in text


def test_every_index_added_to_an_existing_table_is_built_without_locking_it() -> None:
    locking = {f"{m.app_label}.{m.name}": _locking(m) for m in _migrations()}
    assert {name for name, found in locking.items() if found} == LOCKS_KNOWN, locking


def test_a_migration_that_builds_an_index_concurrently_runs_outside_a_transaction() -> None:
    inside = [f"{m.app_label}.{m.name}" for m in _migrations()
              if m.atomic and any(isinstance(op, AddIndexWithoutLocking) for op in m.operations)]
    assert inside == []
