"""The admin's filters of the move log by source and of the event log by kind find their rare
rows (a turn clock's moves, strikes, forfeits) through an index of their own instead of a scan
of every row (0.4 s for the moves and 0.2 s for the events at a year of a public ladder: the
scale review). Built without locking the tables (``core.migrations.AddIndexWithoutLocking``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.models import QuerySet

from games.models import EventKind, GameEvent, MoveRecord, MoveSource

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
