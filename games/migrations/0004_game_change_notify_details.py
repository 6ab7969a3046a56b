"""The game-change NOTIFY says what changed: ``"<id> <version> <awaiting or -> <status>"``.

Waiters (``games.notify``) can then ignore a change they do not wait for, such as their own
move or another seat's turn, without reading the game.
"""

from django.db import migrations

CHANNEL = "uno_arena_games"  # games.notify.CHANNEL (kept literal: migrations are frozen)


def _function(payload: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION games_game_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', {payload});
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


DETAILED = _function(
    "NEW.id::text || ' ' || NEW.version::text || ' ' || COALESCE(NEW.awaiting::text, '-') "
    "|| ' ' || NEW.status"
)
BARE = _function("NEW.id::text")


def detailed(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DETAILED)


def bare(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BARE)


class Migration(migrations.Migration):
    dependencies = [("games", "0003_ordering_without_join")]

    operations = [migrations.RunPython(detailed, bare)]
