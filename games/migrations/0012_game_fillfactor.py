"""A game's row is rewritten by every move. With room left in its page (fillfactor 70), the
new version goes in the same page as a heap-only tuple (HOT): none of the table's five indexes
is written, and the old version is pruned in place. Full pages made a third of the moves'
updates write every index (``bench/api.py``: 63% of updates HOT before, 94% after). Pages
written before keep their fill until rewritten; new games go to new pages. PostgreSQL only."""

from typing import Any

from django.db import migrations

FILL = 70


def _fill(percent: int | None) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("games", "Game")._meta.db_table)
        setting = f"SET (fillfactor = {percent})" if percent else "RESET (fillfactor)"
        schema_editor.execute(f"ALTER TABLE {table} {setting}")

    return run


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0011_admin_filter_indexes'),
    ]

    operations = [
        migrations.RunPython(_fill(FILL), _fill(None)),
    ]
