"""The games table leaves room in its pages (migration 0012), so a move's update of its game
row can stay in the page without writing the table's indexes (a HOT update)."""

from __future__ import annotations

import pytest
from django.db import connection

from games.models import Game

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def test_the_games_table_leaves_room_in_its_pages_for_the_next_version_of_a_row() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass",
                       [Game._meta.db_table])
        (options,) = cursor.fetchone()
    assert "fillfactor=70" in options
