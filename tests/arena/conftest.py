"""Fixtures the admin page tests share."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


@pytest.fixture
def admin_quick(settings: Any, fresh_cache: None) -> None:
    """Quick password hashing (each test signs somebody in) and a cache of the test's own."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff(django_user_model: Any) -> Client:
    """A superuser's signed-in client."""
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password="root-pw-1"))
    return client
