"""Migration operations of our own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib.postgres.operations import NotInTransactionMixin
from django.db import migrations


class AddIndexWithoutLocking(NotInTransactionMixin, migrations.AddIndex):
    """``AddIndex`` built ``CONCURRENTLY`` on PostgreSQL (as Django's ``AddIndexConcurrently``,
    which only PostgreSQL takes): a big table (a year of moves) keeps taking writes while its
    index is built, so an upgrade does not stop play. As usual on other databases. Its
    migration must say ``atomic = False``: PostgreSQL builds such an index outside a
    transaction."""

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any,
                          to_state: Any) -> None:
        if not _postgres(schema_editor):
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        self._ensure_not_in_transaction(schema_editor)
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        # A concurrent build waits for every transaction older than it: not for the lock
        # timeout every connection has (``DB_LOCK_TIMEOUT_SECONDS``), which would leave a
        # half-built (invalid) index behind. One left by a build that failed anyway (a
        # cancel, a crash) is dropped first, or this migration could never run again.
        with _no_lock_timeout(schema_editor):
            _drop_if_invalid(schema_editor, self.index.name)
            schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any,
                           to_state: Any) -> None:
        if not _postgres(schema_editor):
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        self._ensure_not_in_transaction(schema_editor)
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)


@contextmanager
def _no_lock_timeout(schema_editor: Any) -> Iterator[None]:
    """On PostgreSQL, no lock timeout while the block runs (elsewhere there is none)."""
    if not _postgres(schema_editor):
        yield
        return
    schema_editor.execute("SET lock_timeout = 0")
    try:
        yield
    finally:
        schema_editor.execute("RESET lock_timeout")


def _postgres(schema_editor: Any) -> bool:
    return bool(schema_editor.connection.vendor == "postgresql")


def _concurrently(schema_editor: Any) -> str:
    return "CONCURRENTLY " if _postgres(schema_editor) else ""


def _drop_if_invalid(schema_editor: Any, name: str) -> None:
    """Drop the index ``name`` if a failed concurrent build left it invalid (PostgreSQL)."""
    if not _postgres(schema_editor):
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT NOT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                       [schema_editor.quote_name(name)])
        found = cursor.fetchone()
    if found is not None and found[0]:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {schema_editor.quote_name(name)}")


def drop_index_without_locking(table: str, name: str) -> migrations.RunPython:
    """Drop the index ``name`` of ``table``: ``CONCURRENTLY`` on PostgreSQL (writes go on), as
    usual elsewhere; undone by building it again the same way, on its table's ``game_id``. For
    an index Django made for a foreign key whose column another index begins with (its
    migration says ``atomic = False`` and changes the field's state alone)."""

    def drop(apps: Any, schema_editor: Any) -> None:
        with _no_lock_timeout(schema_editor):
            schema_editor.execute(f"DROP INDEX {_concurrently(schema_editor)}IF EXISTS "
                                  f"{schema_editor.quote_name(name)}")

    def build(apps: Any, schema_editor: Any) -> None:
        with _no_lock_timeout(schema_editor):
            _drop_if_invalid(schema_editor, name)
            schema_editor.execute(
                f"CREATE INDEX {_concurrently(schema_editor)}IF NOT EXISTS "
                f"{schema_editor.quote_name(name)} ON {schema_editor.quote_name(table)} "
                f"({schema_editor.quote_name('game_id')})")

    return migrations.RunPython(drop, build)
