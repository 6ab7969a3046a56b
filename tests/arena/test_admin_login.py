"""The admin login form against password guessing (django-axes): it once answered 80 wrong
passwords with 80 login pages. Real requests through the whole middleware stack."""

from __future__ import annotations

from typing import Any

import pytest
from axes.models import AccessAttempt
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture(autouse=True)
def _limits(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = 3


@pytest.fixture
def root(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser("root", password="root-password-1")


def attempt(client: Client, username: str, password: str, address: str = "192.0.2.1") -> int:
    response = client.post(
        LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address
    )
    return int(response.status_code)


def test_the_admin_login_locks_a_guessed_username_out_at_the_guessing_address(
    root: Any,
) -> None:
    client = Client()
    guesses = [attempt(client, "root", f"guess-{i}") for i in range(5)]
    assert guesses == [200, 200, 429, 429, 429]  # 200: the form again, with its error
    # Locked out: the right password does not help from there (a guesser learns nothing)...
    assert attempt(client, "root", "root-password-1") == 429
    # ...but works from another address, and other users at the guessing address are not
    # affected.
    assert attempt(Client(), "root", "root-password-1", address="198.51.100.7") == 302


def test_a_lockout_does_not_reach_other_users_at_the_same_address(
    root: Any, django_user_model: Any
) -> None:
    django_user_model.objects.create_superuser("admin2", password="admin2-password-1")
    client = Client()
    for i in range(4):
        attempt(client, "root", f"guess-{i}")
    assert attempt(Client(), "admin2", "admin2-password-1") == 302


def test_behind_a_counted_proxy_the_lockout_is_per_client(root: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def through_proxy(client_address: str, password: str) -> int:
        response = Client().post(
            LOGIN, {"username": "root", "password": password},
            REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=client_address,
        )
        return int(response.status_code)

    assert [through_proxy("203.0.113.5", "wrong") for _ in range(3)] == [200, 200, 429]
    assert through_proxy("203.0.113.6", "root-password-1") == 302


def test_the_api_password_login_is_left_to_its_own_rate_limit(alice: Any) -> None:
    client = APIClient()
    for i in range(5):
        wrong = client.post("/api/tokens/", {"username": "alice", "password": f"guess-{i}"})
        assert wrong.status_code == 401 and wrong.json()["code"] == "authentication_failed"
    assert not AccessAttempt.objects.exists()
    right = client.post("/api/tokens/", {"username": "alice", "password": "alice-password-1"})
    assert right.status_code == 201
