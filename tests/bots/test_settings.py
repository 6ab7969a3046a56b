"""The bot settings: private addresses allowed on the embedded default, refused in production."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bots.transport import BotTransport

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "ARENA_PRODUCTION": "true",
    "SECRET_KEY": "a-long-and-random-production-secret-key-for-the-test-0123456789-zyx",
    "ALLOWED_HOSTS": "arena.example.org",
}
PRINT = (
    "from django.conf import settings as s; print(s.BOTS_ALLOW_PRIVATE, s.BOTS_MAX_TIMEOUT_SECONDS)"
)


def bot_settings(**extra_env: str) -> str:
    inherited = {
        "DEBUG",
        "SECRET_KEY",
        "ARENA_PRODUCTION",
        "ALLOWED_HOSTS",
        "BOTS_ALLOW_PRIVATE",
        "BOTS_MAX_TIMEOUT_SECONDS",
    }
    env = {k: v for k, v in os.environ.items() if k not in inherited}
    env.update(extra_env)
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", PRINT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_embedded_default_allows_private_bot_addresses() -> None:
    assert bot_settings() == "True 10"


def test_production_refuses_private_bot_addresses_unless_told() -> None:
    assert bot_settings(**PRODUCTION_ENV) == "False 10"
    assert bot_settings(**PRODUCTION_ENV, BOTS_ALLOW_PRIVATE="true") == "True 10"


def test_the_maximum_bot_timeout_is_configurable() -> None:
    assert bot_settings(BOTS_MAX_TIMEOUT_SECONDS="3") == "True 3"


def test_a_transport_without_arguments_follows_the_settings(settings: Any) -> None:
    settings.BOTS_ALLOW_PRIVATE = False
    settings.BOTS_MAX_TIMEOUT_SECONDS = 4
    transport = BotTransport()
    assert (transport.allow_private, transport.max_timeout) == (False, 4.0)
    settings.BOTS_ALLOW_PRIVATE = True
    assert BotTransport().allow_private is True


@pytest.mark.parametrize("name", ["BOTS_ALLOW_PRIVATE", "BOTS_MAX_TIMEOUT_SECONDS"])
def test_each_bot_setting_is_documented_and_passed_through_compose(name: str) -> None:
    """Compose passes every line of .env to the app services (tests/arena/test_deployment.py
    checks that for every documented variable); no entry of its own replaces .env's value."""
    assert f"`{name}`" in (ROOT / "docs" / "configuration.md").read_text()
    app = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["x-app"]
    assert {"path": ".env", "required": False} in app["env_file"]
    assert name not in app["environment"] or f"${{{name}" in app["environment"][name]
