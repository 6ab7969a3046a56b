"""Many new rows at once (``games.rows.insert_new`` / ``insert_many``): what ``bulk_create``
would leave behind, on SQLite and on PostgreSQL (there through COPY)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction

from games import rows
from games.models import Game, Seat

pytestmark = pytest.mark.django_db


def _games(alice: Any, count: int) -> list[Game]:
    return [Game(options={"players": 2}, seed=seed, state={"note": 'a "quoted" \\ value'},
                 created_by=alice) for seed in range(count)]


def test_new_rows_get_their_ids_in_the_order_given(alice: Any) -> None:
    games = _games(alice, 5)
    rows.insert_new(Game, games)
    ids = [g.pk for g in games]
    assert None not in ids and ids == sorted(ids)
    stored = {g.pk: g for g in Game.objects.filter(pk__in=ids)}
    for game in games:
        assert stored[game.pk].seed == game.seed
        assert stored[game.pk].state == {"note": 'a "quoted" \\ value'}


def test_new_rows_carry_the_times_they_were_stored_with(alice: Any) -> None:
    games = _games(alice, 2)
    rows.insert_new(Game, games)
    for game in games:
        stored = Game.objects.get(pk=game.pk)
        assert game.created_at is not None and game.updated_at is not None
        assert (stored.created_at, stored.updated_at) == (game.created_at, game.updated_at)


def test_a_new_row_saved_again_is_updated_not_inserted_twice(alice: Any) -> None:
    games = _games(alice, 2)
    rows.insert_new(Game, games)
    games[0].seed = 4242
    games[0].save()
    assert Game.objects.count() == 2
    assert Game.objects.get(pk=games[0].pk).seed == 4242


def test_rows_made_after_new_rows_take_ids_past_theirs(alice: Any) -> None:
    games = _games(alice, 3)
    rows.insert_new(Game, games)
    later = Game.objects.create(options={"players": 2}, seed=9, created_by=alice)
    assert later.pk > max(g.pk for g in games)


def test_rows_that_break_a_constraint_raise_integrity_error_and_leave_nothing(
        alice: Any) -> None:
    game = _games(alice, 1)[0]
    rows.insert_new(Game, [game])
    twice = [Seat(game=game, index=0, user=alice), Seat(game=game, index=0)]
    with pytest.raises(IntegrityError), transaction.atomic():
        rows.insert_many(Seat, twice)
    assert not Seat.objects.filter(game=game).exists()


def test_nothing_to_insert_writes_nothing(alice: Any) -> None:
    rows.insert_new(Game, [])
    rows.insert_many(Game, [])
    assert not Game.objects.exists()
