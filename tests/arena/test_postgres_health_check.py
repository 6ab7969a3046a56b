"""The PostgreSQL connection's health check (core/postgresql/base.py): a connection the server
left alone is reused without a round trip; one the server closed is noticed and replaced."""

from __future__ import annotations

import select
import time
from typing import Any

import pytest
from django.db import connection, connections

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def full_checks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each full check (Django's ``SELECT 1``) and what it found."""
    seen: list[bool] = []
    wrapper = type(connections["default"])
    original = wrapper.is_usable

    def counted(self: Any) -> bool:
        seen.append(original(self))
        return seen[-1]

    monkeypatch.setattr(wrapper, "is_usable", counted)
    return seen


def _as_a_new_request_finds_it() -> None:
    connection.close_if_unusable_or_obsolete()  # what the end of a request does
    assert not connection.health_check_done


def test_a_connection_the_server_left_alone_is_reused_without_asking(
    full_checks: list[bool],
) -> None:
    connection.ensure_connection()
    before = connection.connection
    _as_a_new_request_finds_it()
    with connection.cursor() as cursor:  # the request's first query checks first
        cursor.execute("SELECT 1")
    assert full_checks == []
    assert connection.connection is before


def test_a_connection_the_server_closed_is_replaced_before_the_request_uses_it(
    full_checks: list[bool],
) -> None:
    connection.ensure_connection()
    before = connection.connection
    pid = before.info.backend_pid
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    poller = select.poll()
    poller.register(before.pgconn.socket, select.POLLIN)
    deadline = time.monotonic() + 5
    while not poller.poll(50) and time.monotonic() < deadline:
        pass  # the server's goodbye is on its way
    _as_a_new_request_finds_it()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (new_pid,) = cursor.fetchone()
    assert full_checks == [False]  # the socket spoke: the full check ran, and failed
    assert new_pid != pid and connection.connection is not before
