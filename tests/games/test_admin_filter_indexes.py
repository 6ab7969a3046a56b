"""The indexes of a game's logs. The admin's filters of the move log by source and of the
event log by kind find their rare rows (a turn clock's moves, strikes, forfeits) through an
index of their own instead of a scan of every row (0.4 s for the moves and 0.2 s for the
events at a year of a public ladder: the scale review), built without locking the tables
(``core.migrations.AddIndexWithoutLocking``). A game's moves, events and seats are found
through their unique index, which begins with the game (migration 0013 dropped the foreign
keys' own indexes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.models import QuerySet

from games.models import EventKind, GameEvent, MoveRecord, MoveSource, Seat

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture
def no_scans() -> Iterator[None]:
    """The planner told to avoid scanning the whole table, as it would with millions of rows
    (on a test's few rows a scan is cheaper, and the index would not show)."""
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET enable_seqscan")


def plan(queryset: QuerySet) -> str:
    """The plan of finding the rows (unordered: on a test's empty table the planner may as
    well walk the primary key backwards for the changelist's order)."""
    return queryset.explain()


@pytest.mark.parametrize("source", [MoveSource.CLOCK, MoveSource.SERVER])
def test_the_moves_not_a_players_are_found_through_their_own_index(
    no_scans: None, source: str
) -> None:
    assert "move_not_player" in plan(MoveRecord.objects.filter(source=source).order_by())


@pytest.mark.parametrize("kind", [EventKind.STRIKE, EventKind.FORFEITED, EventKind.ABORTED])
def test_the_events_of_a_kind_are_found_through_an_index(no_scans: None, kind: str) -> None:
    assert "event_kind" in plan(GameEvent.objects.filter(kind=kind).order_by())


@pytest.mark.parametrize("queryset", [
    lambda: MoveRecord.objects.filter(game_id=1), lambda: GameEvent.objects.filter(game_id=1),
    lambda: Seat.objects.filter(game_id=1),
], ids=["moves", "events", "seats"])
def test_a_games_rows_are_found_through_the_unique_index_that_begins_with_the_game(
    no_scans: None, queryset: Any
) -> None:
    """The foreign key's own index is gone (migration 0013): the unique one serves."""
    assert "unique" in plan(queryset().order_by())
