"""Shared fixtures: fixed personas (alice owns, bob plays, charlie has no access).

In CI (``CI=true``) the real services are mandatory: a run that silently fell back to SQLite or
to in-process Celery would pass without testing what production runs, so it fails instead.
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings  # imported late: the engine tests run without Django

    if IN_CI:
        checks = {
            "DATABASE_URL (PostgreSQL)": (settings.DATABASE_URL or "").startswith("postgres"),
            "CELERY_BROKER_URL (Redis)": (settings.CELERY_BROKER_URL or "").startswith("redis"),
        }
        missing = [name for name, ok in checks.items() if not ok]
        if missing:
            raise pytest.UsageError(
                "CI=true but these services are not configured: " + ", ".join(missing)
            )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip service-bound tests on the embedded default; never skip them in CI."""
    from django.conf import settings

    on_postgres = (settings.DATABASE_URL or "").startswith("postgres")
    on_redis = (settings.CELERY_BROKER_URL or "").startswith("redis")
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs DATABASE_URL=postgresql://…"))
        if "redis" in item.keywords and not on_redis:
            item.add_marker(pytest.mark.skip(reason="needs CELERY_BROKER_URL=redis://…"))


@pytest.fixture(autouse=True)
def _no_lingering_listener() -> Any:
    """A long poll's PostgreSQL listener must not outlive its test (or the test database)."""
    yield
    notify = sys.modules.get("games.notify")
    if notify is not None:
        notify.stop_listener()


@pytest.fixture(autouse=True)
def _no_remembered_rows() -> Any:
    """Rows a process remembers (``games.recent``) belong to one test's database: a later test
    may reuse the ids."""
    yield
    recent = sys.modules.get("games.recent")
    if recent is not None:
        recent.forget_all()


@pytest.fixture(autouse=True)
def _broker_tried_afresh() -> Any:
    """A test that made a send fail leaves the broker in back-off (``core.broker``); the next
    test's sends must still be tried."""
    yield
    broker = sys.modules.get("core.broker")
    if broker is not None:
        broker.forget()
    throttling = sys.modules.get("core.throttling")  # the cache's back-off, likewise
    if throttling is not None:
        throttling.cache_backoff.forget()


@pytest.fixture
def fresh_cache(settings: Any) -> None:
    """Throttle counters live in the cache; give the test a cache of its own.

    In CI the cache is one Redis shared by every xdist worker, so flushing it would wipe the
    counters of a test running in another worker. A key prefix of the test's own isolates it
    without touching anyone else's keys.
    """
    settings.CACHES = {
        name: {**conf, "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
        for name, conf in settings.CACHES.items()
    }


@pytest.fixture
def alice(django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def bob(django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def charlie(django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("charlie", password="charlie-password-1")
