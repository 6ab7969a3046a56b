"""Settings come from the environment, strictly; the production switch is deploy-safe."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.sqlite3.base import DatabaseWrapper

from arena.env import Env

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "ARENA_PRODUCTION": "true",
    "SECRET_KEY": "a-long-and-random-production-secret-key-for-the-test-0123456789-zyx",
    "ALLOWED_HOSTS": "arena.example.org",
}


def manage(*args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    inherited = {"DEBUG", "SECRET_KEY", "ARENA_PRODUCTION", "ALLOWED_HOSTS"}
    env = {k: v for k, v in os.environ.items() if k not in inherited}
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_parses_booleans_strictly() -> None:
    assert Env({"X": "yes"}).bool("X", False) is True
    assert Env({"X": "0"}).bool("X", True) is False
    assert Env({}).bool("X", True) is True
    with pytest.raises(ImproperlyConfigured, match="X='maybe'"):
        Env({"X": "maybe"}).bool("X", False)


def test_it_names_the_variable_of_a_malformed_number() -> None:
    with pytest.raises(ImproperlyConfigured, match="DB_CONN_MAX_AGE='ten'"):
        Env({"DB_CONN_MAX_AGE": "ten"}).int("DB_CONN_MAX_AGE", 600)
    with pytest.raises(ImproperlyConfigured, match="below its minimum"):
        Env({"N": "-1"}).int("N", 1, minimum=0)


def test_it_rejects_a_url_with_the_wrong_scheme() -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        Env({"DATABASE_URL": "mysql://x/y"}).url("DATABASE_URL", ("postgres", "postgresql"))


def test_it_takes_a_choice_in_any_case_and_refuses_anything_else() -> None:
    assert Env({"BOTS_RUNNER": "Celery"}).choice("BOTS_RUNNER", "", ("celery", "off")) == "celery"
    assert Env({}).choice("BOTS_RUNNER", "", ("celery", "off")) == ""
    with pytest.raises(ImproperlyConfigured, match="BOTS_RUNNER='celry' is not one of celery, off"):
        Env({"BOTS_RUNNER": "celry"}).choice("BOTS_RUNNER", "", ("celery", "off"))


def test_a_misspelt_bot_runner_stops_start_up() -> None:
    """Before: anything but celery or off ran the bots' turns in the web process, silently."""
    result = manage("check", BOTS_RUNNER="celry")
    assert result.returncode != 0
    assert "BOTS_RUNNER='celry' is not one of celery, thread, off" in result.stderr


def test_it_rejects_an_empty_list_item() -> None:
    with pytest.raises(ImproperlyConfigured, match="ALLOWED_HOSTS"):
        Env({"ALLOWED_HOSTS": "a.org,,b.org"}).list("ALLOWED_HOSTS")


def test_a_malformed_variable_stops_start_up_with_its_name() -> None:
    result = manage("check", DB_CONN_MAX_AGE="forever")
    assert result.returncode != 0
    assert "DB_CONN_MAX_AGE='forever' is not a whole number" in result.stderr


def test_production_requires_a_secret_key_from_the_environment() -> None:
    result = manage("check", ARENA_PRODUCTION="true", ALLOWED_HOSTS="arena.example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_requires_allowed_hosts() -> None:
    env = dict(PRODUCTION_ENV, ALLOWED_HOSTS="")
    result = manage("check", **env)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS must name this site's hosts" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ALLOWED_HOSTS", "*", "ALLOWED_HOSTS must name this site's hosts"),
        ("SECRET_KEY", "ab" * 30, "SECRET_KEY must be a random value of 50 or more"),
        ("SECRET_KEY", "x" * 45 + "abcd", "SECRET_KEY must be a random value of 50 or more"),
        ("THROTTLE_SIGNUP", "20/fortnight", "THROTTLE_SIGNUP='20/fortnight' is not a rate"),
        ("NUM_PROXIES", "-1", "NUM_PROXIES=-1 is below its minimum"),
        ("DATABASE_URL", "postgresql://arena:CHANGE-ME@db/arena", "CHANGE-ME placeholder"),
    ],
)
def test_production_refuses_a_weak_or_malformed_setting(
    name: str, value: str, message: str
) -> None:
    result = manage("check", **dict(PRODUCTION_ENV, **{name: value}))
    assert result.returncode != 0
    assert message in result.stderr


def test_production_passes_check_deploy_without_warnings() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_can_leave_out_hsts_preload_and_subdomains() -> None:
    """A site under a domain that also serves plain-HTTP hosts: check --deploy says what it
    gives up, and nothing else changes."""
    result = manage("check", "--deploy", **PRODUCTION_ENV, SECURE_HSTS_PRELOAD="false",
                    SECURE_HSTS_INCLUDE_SUBDOMAINS="false")
    assert result.returncode == 0, result.stderr
    warned = {w for w in ("W005", "W021") if f"security.{w}" in result.stderr + result.stdout}
    assert warned == {"W005", "W021"}


@pytest.mark.parametrize(("extra", "required"), [
    ({}, "True"),
    ({"BOTS_ALLOW_PRIVATE": "true"}, "False"),  # bots on your own network
    ({"BOTS_REQUIRE_HTTPS": "false"}, "False"),
])
def test_production_takes_https_bot_urls_only_unless_private_addresses_are_allowed(
    extra: dict[str, str], required: str
) -> None:
    result = manage("shell", "-c", "from django.conf import settings; "
                    "print(settings.BOTS_REQUIRE_HTTPS)", **PRODUCTION_ENV, **extra)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == required
    assert manage("shell", "-c", "from django.conf import settings; "
                  "print(settings.BOTS_REQUIRE_HTTPS)").stdout.strip().splitlines()[-1] == "False"


def test_the_demo_admin_is_refused_in_production() -> None:
    result = manage("demo_admin", **PRODUCTION_ENV)
    assert result.returncode != 0
    assert "refused" in result.stderr


def test_postgres_uses_persistent_health_checked_connections() -> None:
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings as s; d = s.DATABASES['default'];"
        "print(d['ENGINE'], d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])",
        DATABASE_URL="postgresql://u:p@127.0.0.1:5/db",
    )
    last_line = result.stdout.strip().splitlines()[-1]
    assert last_line.split() == ["core.postgresql", "600", "True"], result.stderr


def test_the_database_password_is_taken_as_written_apart_from_the_url() -> None:
    result = manage(
        "shell",
        "-c",
        "from django.db import connection; print(connection.get_connection_params()['password'])",
        DATABASE_URL="postgresql://u@127.0.0.1:5/db",
        DATABASE_PASSWORD=" pa/ss?w#rd%65 ",
    )
    # As written: the postgres image takes POSTGRES_PASSWORD raw, spaces and all.
    assert result.stdout.splitlines()[-1] == " pa/ss?w#rd%65 ", result.stderr


def test_a_database_url_that_does_not_parse_stops_start_up_without_showing_the_password(
) -> None:
    """Before: dj_database_url's ParseError, naming no variable, from a raw / in a password."""
    result = manage("check", DATABASE_URL="postgresql://u:se/cret@127.0.0.1:5/db")
    assert result.returncode != 0
    assert "DATABASE_URL is not a valid URL" in result.stderr
    assert "DATABASE_PASSWORD" in result.stderr
    assert "se/cret" not in result.stderr


def embedded_sqlite(path: Path) -> DatabaseWrapper:
    """A connection to a fresh file with exactly the embedded default's SQLite options."""
    configured = settings.DATABASES["default"]
    if configured["ENGINE"] != "django.db.backends.sqlite3":
        options = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    else:
        options = configured["OPTIONS"]
    wrapper = DatabaseWrapper(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(path),
            "OPTIONS": options,
            "TIME_ZONE": None,
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": False,
            "AUTOCOMMIT": True,
            "ATOMIC_REQUESTS": False,
            "TEST": {},
            "USER": "",
            "PASSWORD": "",
            "HOST": "",
            "PORT": "",
        }
    )
    return wrapper


@pytest.fixture
def unblocked(django_db_blocker):  # type: ignore[no-untyped-def]
    """These tests open their own SQLite files, outside the test database."""
    with django_db_blocker.unblock():
        yield


@pytest.mark.usefixtures("unblocked")
def test_the_embedded_sqlite_uses_wal_and_immediate_transactions(tmp_path: Path) -> None:
    connection = embedded_sqlite(tmp_path / "db.sqlite3")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    connection.close()


@pytest.mark.usefixtures("unblocked")
def test_the_embedded_sqlite_survives_sixteen_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    setup = embedded_sqlite(path)
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        cursor.execute("INSERT INTO counter (id, n) VALUES (1, 0)")
    setup.close()
    errors: list[BaseException] = []

    def writer() -> None:
        connection = embedded_sqlite(path)
        try:
            for _ in range(20):
                # Read-then-write inside one transaction, begun the way transaction.atomic()
                # begins it on SQLite: the pattern that fails with "database is locked" under
                # SQLite's default DEFERRED transactions.
                with connection.cursor() as cursor:
                    connection._start_transaction_under_autocommit()
                    cursor.execute("SELECT n FROM counter WHERE id = 1")
                    (n,) = cursor.fetchone()
                    cursor.execute("UPDATE counter SET n = %s WHERE id = 1", [n + 1])
                    cursor.execute("COMMIT")
        except BaseException as error:  # collected and asserted below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    check = embedded_sqlite(path)
    with check.cursor() as cursor:
        cursor.execute("SELECT n FROM counter WHERE id = 1")
        assert cursor.fetchone()[0] == 16 * 20
    check.close()
