"""In CI the suite runs on the real services; these tests prove it."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.db import connection


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_database_is_postgresql() -> None:
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        assert "PostgreSQL" in cursor.fetchone()[0]


@pytest.mark.redis
def test_redis_answers_through_the_configured_broker_url() -> None:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    assert client.ping() is True
