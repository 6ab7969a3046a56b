"""The game-change NOTIFY also carries the new row, when it fits:
``"<id> <version> <awaiting or -> <status> <row as JSON>"``.

A stream in another process than the mover's then builds the turn it owes from the row it
heard, on its event loop, instead of reading the game on a thread (docs/scaling.md: those
wake-ups were the slow half). NOTIFY payloads stop at 8000 bytes, and one too long would fail
the move's transaction: a row over ``ROOM`` bytes is left out (the listener reads the game, as
before). A two-seat game's row is about 5.2 kB (3.3 of them the RNG's state, which the
engine's state needs to load).
"""

from django.db import migrations

CHANNEL = "uno_arena_games"  # games.notify.CHANNEL (kept literal: migrations are frozen)
ROOM = 7000

WITH_ROW = f"""
CREATE OR REPLACE FUNCTION games_game_notify() RETURNS trigger AS $$
DECLARE
    change text := NEW.id::text || ' ' || NEW.version::text || ' '
        || COALESCE(NEW.awaiting::text, '-') || ' ' || NEW.status;
    row_text text := to_jsonb(NEW)::text;
BEGIN
    IF octet_length(row_text) <= {ROOM} THEN
        change := change || ' ' || row_text;
    END IF;
    PERFORM pg_notify('{CHANNEL}', change);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

WITHOUT_ROW = f"""
CREATE OR REPLACE FUNCTION games_game_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', NEW.id::text || ' ' || NEW.version::text || ' '
        || COALESCE(NEW.awaiting::text, '-') || ' ' || NEW.status);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


def with_row(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(WITH_ROW)


def without_row(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(WITHOUT_ROW)


class Migration(migrations.Migration):
    dependencies = [("games", "0007_seat_bot")]

    operations = [migrations.RunPython(with_row, without_row)]
