"""The stream's horizon on PostgreSQL (``games.rows.stream_events``): a row is delivered once no
transaction that could still commit below it is running. Transactions of other databases on
the same server cannot write our rows, so they never hold it back; two-phase ones included, a
transaction prepared and forgotten there (it stays until someone commits or rolls it back, and
survives restarts) would otherwise hold every stream's new rows back for good."""

from __future__ import annotations

import os
from typing import Any

import psycopg
import pytest
from django.db import connection

from games import rows, services, stream
from tests.conftest import IN_CI

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
# One id per test process: under xdist both tests may hold theirs at the same time.
PREPARED = f"uno-arena-test-horizon-{os.getpid()}"


def a_started_game(alice: Any, bob: Any) -> Any:
    game = services.game_create(user=alice, options={"single_hand": True}, seats=2, join=True)
    services.seat_join(game_id=game.pk, user=bob, index=None, bot_id=None)
    return services.game_start(game_id=game.pk, user=alice)


@pytest.fixture
def prepared_elsewhere() -> Any:
    """A transaction with an id, prepared (PREPARE TRANSACTION) in the server's ``postgres``
    database, rolled back at the end."""
    params = {**connection.get_connection_params(), "dbname": "postgres", "autocommit": True}
    params.pop("cursor_factory", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params) as other:
        if other.execute("SHOW max_prepared_transactions").fetchone() == ("0",):
            message = "needs PostgreSQL with max_prepared_transactions > 0 (.ci/run sets 4)"
            if IN_CI:
                pytest.fail(message)
            pytest.skip(message)
        other.execute("BEGIN")
        other.execute("SELECT pg_current_xact_id()")  # an id of its own, in every snapshot's xip
        other.execute(f"PREPARE TRANSACTION '{PREPARED}'")
        try:
            yield
        finally:
            other.execute(f"ROLLBACK PREPARED '{PREPARED}'")


def test_a_transaction_prepared_in_another_database_does_not_hold_the_stream_back(
    prepared_elsewhere: None, alice: Any, bob: Any
) -> None:
    game = a_started_game(alice, bob)
    found = rows.stream_events([game.pk], stream.ROW_KINDS)
    started = [row for row in found.rows if row.kind == "started"]
    assert len(started) == 1
    assert started[0].position < found.horizon  # settled: the stream sends it


def test_a_stream_sends_the_start_while_another_database_holds_a_prepared_transaction(
    prepared_elsewhere: None, alice: Any, bob: Any
) -> None:
    state, _ = stream.open_stream(user_id=bob.pk, since=None)
    game = a_started_game(alice, bob)
    assert [e["type"] for e in stream.read(state, None) if e["game"] == game.pk][:1] == ["started"]
