"""Migration operations of our own."""

from __future__ import annotations

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
        if schema_editor.connection.vendor != "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        self._ensure_not_in_transaction(schema_editor)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any,
                           to_state: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        self._ensure_not_in_transaction(schema_editor)
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)
