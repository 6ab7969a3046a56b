"""On PostgreSQL, every change of a game's version NOTIFYs the long-poll listeners.

A trigger instead of a ``pg_notify`` call from the application: no extra round trip per move,
and no code path can change a game without telling the waiters. NOTIFY is transactional: the
listeners hear of a change when it commits, never of a rolled-back one.
"""

from django.db import migrations

CHANNEL = "uno_arena_games"  # games.notify.CHANNEL (kept literal: migrations are frozen)

CREATE = f"""
CREATE FUNCTION games_game_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.id::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER games_game_notify
    AFTER UPDATE OF version ON games_game
    FOR EACH ROW WHEN (OLD.version IS DISTINCT FROM NEW.version)
    EXECUTE FUNCTION games_game_notify();
"""

DROP = """
DROP TRIGGER IF EXISTS games_game_notify ON games_game;
DROP FUNCTION IF EXISTS games_game_notify();
"""


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
