"""A process remembers the game rows it last read or wrote (``games.rows``), so a move named
by the version it was decided on, and a long poll woken for a version this process wrote,
need no read. Every change bumps the version and moves are compare-and-set, so a remembered
row can only ever be out of date, never wrong."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from games import rows, services
from games.errors import NotAPlayer, StaleVersion
from games.models import Game, MoveRecord
from games.uno import Options
from games.uno.scenario import scenario

pytestmark = pytest.mark.django_db(transaction=True)


def _rigged(alice: Any, bob: Any) -> Game:
    """A running two-seat game: alice (seat 0) to play R1 or R2 on a red 3."""
    game = services.game_create(user=alice, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=bob)
    services.game_start(game_id=game.pk, user=alice)
    state = scenario(Options(players=2), hands=[["R1", "R2", "G7"], ["R5", "B4"]], top="R3",
                     deck=["Y1", "Y2"])
    Game.objects.filter(pk=game.pk).update(state=state.to_json(), awaiting=state.awaiting)
    return Game.objects.get(pk=game.pk)


def test_a_row_read_once_is_recalled_by_its_version_without_a_query(
    alice: Any, bob: Any, django_assert_num_queries: Any
) -> None:
    game = _rigged(alice, bob)
    first = rows.seat_with_game(game.pk, alice.pk)
    assert first is not None
    with django_assert_num_queries(0):
        again = rows.seat_with_game(game.pk, alice.pk, version=game.version)
    assert again is not None and again.game is not first.game
    assert again.game.state == first.game.state and again.index == first.index == 0
    first.game.state["hands"][0].clear()  # what one caller does to its copy...
    assert again.game.state["hands"][0]  # ...another never sees


def test_another_version_or_user_is_read_from_the_database(
    alice: Any, bob: Any, django_assert_num_queries: Any
) -> None:
    game = _rigged(alice, bob)
    rows.seat_with_game(game.pk, alice.pk)
    with django_assert_num_queries(1):
        rows.seat_with_game(game.pk, alice.pk, version=game.version + 1)
    with django_assert_num_queries(1):
        rows.seat_with_game(game.pk, bob.pk, version=game.version)


def test_a_move_written_here_is_recalled_for_the_other_seat(
    alice: Any, bob: Any, django_assert_num_queries: Any
) -> None:
    game = _rigged(alice, bob)
    rows.seat_with_game(game.pk, bob.pk)  # bob's seat, seen before (his long poll)
    alices = rows.seat_with_game(game.pk, alice.pk)
    assert alices is not None
    played = services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                                expected_version=game.version, seen=alices.game)
    with django_assert_num_queries(0):
        bobs = rows.seat_with_game(game.pk, bob.pk, version=played.game.version)
    assert bobs is not None and bobs.index == 1
    assert bobs.game.state == Game.objects.get(pk=game.pk).state
    assert bobs.game.awaiting == 1


def test_a_move_on_a_recalled_row_that_is_out_of_date_is_stale(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob)
    rows.seat_with_game(game.pk, alice.pk)
    # The game moves on without this process remembering it (the locked path).
    services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R2"},
                       expected_version=None)
    old = rows.seat_with_game(game.pk, alice.pk, version=game.version)
    assert old is not None and old.game.version == game.version
    with pytest.raises(StaleVersion):
        services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                           expected_version=game.version, seen=old.game)
    assert list(MoveRecord.objects.filter(game=game).values_list("move", flat=True)) == [
        {"type": "play", "card": "R2"}
    ]


def test_rows_read_inside_a_transaction_are_not_remembered(
    alice: Any, bob: Any, django_assert_num_queries: Any
) -> None:
    game = _rigged(alice, bob)
    with transaction.atomic():
        rows.seat_with_game(game.pk, alice.pk)
    with django_assert_num_queries(1):
        rows.seat_with_game(game.pk, alice.pk, version=game.version)


def test_a_seat_is_recalled_only_at_the_version_it_was_read_at(
    alice: Any, bob: Any, charlie: Any
) -> None:
    game = services.game_create(user=bob, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=alice)
    assert rows.seat_with_game(game.pk, alice.pk) is not None  # alice at seat 1, remembered
    services.seat_leave(game_id=game.pk, user=alice)
    services.seat_join(game_id=game.pk, user=charlie)
    services.game_start(game_id=game.pk, user=bob)
    bobs = rows.seat_with_game(game.pk, bob.pk)  # the newest version, remembered
    assert bobs is not None
    assert rows.seat_with_game(game.pk, alice.pk, version=bobs.game.version) is None


def test_the_locked_path_refuses_a_seat_that_is_no_longer_the_players(
    alice: Any, bob: Any, charlie: Any
) -> None:
    game = services.game_create(user=bob, options={}, seats=2)
    services.seat_join(game_id=game.pk, user=charlie)
    services.game_start(game_id=game.pk, user=bob)
    game.refresh_from_db()
    with pytest.raises(NotAPlayer):
        services.move_play(game_id=game.pk, seat=1, move={"type": "draw"},
                           expected_version=game.version, player=alice.pk)
    assert not MoveRecord.objects.filter(game=game).exists()


def _prepared() -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.postgres
def test_on_postgresql_a_plain_move_and_the_seat_read_are_prepared_statements(
    alice: Any, bob: Any
) -> None:
    game = _rigged(alice, bob)
    seat = rows.seat_with_game(game.pk, alice.pk)
    assert seat is not None
    played = services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                                expected_version=game.version, seen=seat.game)
    statements = _prepared()
    assert any(s.startswith("WITH cas AS (UPDATE") for s in statements), statements
    assert any(s.startswith('SELECT s."id"') for s in statements), statements
    # Stored exactly as the ORM would read it back.
    record = MoveRecord.objects.get(game=game)
    assert (record.move, record.source, record.version) == (
        {"type": "play", "card": "R1"}, "player", played.game.version
    )
    stored = Game.objects.get(pk=game.pk)
    assert stored.state == played.game.state and stored.updated_at == played.game.updated_at
    assert record.created_at == stored.updated_at


@pytest.mark.postgres
def test_prepared_statements_can_be_turned_off_for_a_pooler(
    alice: Any, bob: Any, settings: Any
) -> None:
    from django.db import connection

    settings.DB_PREPARED_STATEMENTS = False
    game = _rigged(alice, bob)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    seat = rows.seat_with_game(game.pk, alice.pk)
    assert seat is not None
    services.move_play(game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                       expected_version=game.version, seen=seat.game)
    assert MoveRecord.objects.filter(game=game).count() == 1
    assert _prepared() == []


def test_a_move_record_built_by_position_is_the_one_built_by_keyword(alice: Any, bob: Any) -> None:
    game = _rigged(alice, bob)
    values = {"number": 3, "version": 9, "seat": 1, "move": {"type": "draw"}, "source": "server"}
    fast = rows.new_move_record(game, **values)
    slow = MoveRecord(game=game, **values)
    assert fast.game is game and fast.pk is None and fast._state.adding
    for field in MoveRecord._meta.concrete_fields:
        assert getattr(fast, field.attname) == getattr(slow, field.attname), field.name


@pytest.mark.postgres
def test_a_column_type_changed_by_a_migration_does_not_break_the_prepared_reads(
    alice: Any, bob: Any
) -> None:
    """PostgreSQL refuses a prepared statement whose result columns changed type ("cached
    plan must not change result type"): the statement is prepared again, not failed."""
    import psycopg
    from django.db import connection

    game = _rigged(alice, bob)
    assert rows.seat_with_game(game.pk, alice.pk) is not None  # prepared on this connection
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params, autocommit=True) as other:  # a migration, elsewhere
        other.execute("ALTER TABLE games_seat ALTER COLUMN strikes TYPE integer")
        try:
            seat = rows.seat_with_game(game.pk, alice.pk)
            assert seat is not None and seat.strikes == 0
            played = services.move_play(
                game_id=game.pk, seat=0, move={"type": "play", "card": "R1"},
                expected_version=game.version, seen=seat.game,
            )
            assert played.game.version == game.version + 1
        finally:
            other.execute("ALTER TABLE games_seat ALTER COLUMN strikes TYPE smallint")


@pytest.mark.parametrize(
    "number", [2**64, 2**64 - 1, -(2**63) - 1, 10**30, 2**63 - 1, 10**19 - 1, -(2**63), -(10**18)]
)
def test_a_json_columns_integers_come_back_as_the_same_integers_past_64_bits_too(
    number: int,
) -> None:
    """orjson reads an integer past 64 bits as a float (found by a review): such text goes to
    the json module."""
    from games.recent import dumped, loaded

    value = {"n": number, "list": [number, "12345678901234567890 in a string"]}
    assert loaded(dumped(value)) == value
    assert type(loaded(dumped(value))["n"]) is int


def test_json_text_with_a_lone_surrogate_is_read_as_the_json_module_reads_it() -> None:
    import json

    from games.recent import loaded

    assert loaded('{"name": "\\ud800", "raw": "\ud800"}') == json.loads(
        '{"name": "\\ud800", "raw": "\ud800"}')
