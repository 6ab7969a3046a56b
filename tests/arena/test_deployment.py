"""docker-compose.yml cannot run here: these tests read it against the settings it feeds."""

from __future__ import annotations

import json
import re
import time
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_SOURCE = (ROOT / "arena" / "settings.py").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def interpolate(value: str, env: dict[str, str] | None = None) -> str:
    """What docker compose makes of ``value`` given the variables ``env`` (.env and the shell):
    ``${NAME}``, ``${NAME:-default}`` (nested too) and ``${NAME:?error}``; ``$$`` is a ``$``."""
    if "$$" in value:
        return "$".join(interpolate(part, env) for part in value.split("$$"))
    env = env or {}
    out, i = "", 0
    while (start := value.find("${", i)) >= 0:
        depth, end = 0, start
        for end in range(start + 1, len(value)):  # the matching brace, past nested ones
            depth += {"{": 1, "}": -1}.get(value[end], 0)
            if depth == 0:
                break
        name, op, rest = re.match(r"(\w+)(:-|:\?)?(.*)", value[start + 2:end], re.S).groups()  # type: ignore[union-attr]
        if env.get(name):
            found = env[name]
        elif op == ":?":
            raise AssertionError(f"compose refuses to start without {name}: {rest}")
        else:
            found = interpolate(rest, env) if op == ":-" else ""
        out, i = out + value[i:start] + found, end + 1
    return out + value[i:]


def command(service: str, env: dict[str, str] | None = None) -> list[str]:
    return [interpolate(arg, env) for arg in compose()["services"][service]["command"]]


def app_environment() -> dict[str, str]:
    return compose()["x-app"]["environment"]


def test_every_variable_compose_sets_is_read_by_the_settings() -> None:
    for name in app_environment():
        assert re.search(rf'"{name}"', SETTINGS_SOURCE), f"settings.py never reads {name}"


def test_compose_runs_in_production_mode_with_real_services() -> None:
    env = app_environment()
    assert env["ARENA_PRODUCTION"] == "true"
    assert env["DATABASE_URL"].startswith("postgresql://")
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:")
    assert "${SECRET_KEY:?" in env["SECRET_KEY"], "the secret key must come from the environment"


def test_compose_has_the_four_services_with_health_checks() -> None:
    services = compose()["services"]
    for name in ("web", "worker", "postgres", "redis"):
        assert name in services
    for name in ("web", "postgres", "redis", "worker", "matches", "beat"):
        assert "healthcheck" in services[name], name
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"]


@pytest.mark.parametrize("service", ["worker", "matches", "beat"])
def test_the_celery_services_are_healthy_while_their_liveness_file_is_fresh(
    service: str, tmp_path: Path
) -> None:
    """The healthcheck, run as compose runs it (``$$`` is a ``$``), on a file touched now, one
    three minutes old, and none (arena/liveness.py touches it)."""
    import os
    import subprocess

    alive = app_environment()["CELERY_ALIVE_FILE"]
    check = compose()["services"][service]["healthcheck"]
    kind, script = check["test"]
    assert kind == "CMD-SHELL" and alive in script
    script = interpolate(script).replace(alive, str(tmp_path / "alive"))

    def healthy() -> bool:
        return subprocess.run(["sh", "-c", script], timeout=10).returncode == 0

    assert not healthy()  # not started yet
    (tmp_path / "alive").touch()
    assert healthy()
    three_minutes_ago = time.time() - 180
    os.utime(tmp_path / "alive", (three_minutes_ago, three_minutes_ago))
    assert not healthy()


def test_one_beat_process_sends_the_periodic_turn_clock_sweep() -> None:
    beat = compose()["services"]["beat"]
    assert beat["command"][:4] == ["celery", "-A", "arena", "beat"]
    assert "deploy" not in beat  # no replicas: two beats would send every sweep twice


def test_migrations_run_before_web_and_worker_start() -> None:
    services = compose()["services"]
    assert "manage.py migrate --no-input" in " ".join(services["migrate"]["command"])
    for name in ("web", "worker", "matches", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )


def test_the_dockerfile_copies_every_package_the_project_installs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for package in ("arena", "core", "games", "bots"):
        assert f"COPY {package} {package}" in dockerfile


def test_the_image_has_the_starter_bot_that_the_demo_and_tournament_commands_start() -> None:
    from arena.local_bots import STARTER_SCRIPT

    path = STARTER_SCRIPT.relative_to(ROOT)
    assert STARTER_SCRIPT.exists()
    folder = path.parts[0]
    assert f"COPY {folder} {folder}" in (ROOT / "Dockerfile").read_text()
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    ignored = [line.strip().rstrip("/") for line in lines
               if line.strip() and not line.startswith("#")]
    assert not any(fnmatch(part, pattern) for pattern in ignored
                   for part in (folder, str(path))), ignored


def test_the_web_health_check_path_exists_and_is_exempt_from_the_https_redirect() -> None:
    healthcheck = " ".join(compose()["services"]["web"]["healthcheck"]["test"])
    assert "/healthz/" in healthcheck
    assert 'SECURE_REDIRECT_EXEMPT = [r"^healthz/$"]' in SETTINGS_SOURCE


def test_only_the_proxy_is_published_local_unless_told_and_the_health_check_names_the_site(
) -> None:
    services = compose()["services"]
    assert "ports" not in services["web"]  # gunicorn never faces clients itself
    assert services["proxy"]["ports"] == ["${WEB_BIND:-127.0.0.1}:${WEB_PORT:-8000}:80"]
    check = services["web"]["healthcheck"]["test"][-1]
    assert "ALLOWED_HOSTS" in check and "'Host'" in check  # Django refuses unknown hosts


def proxy_mounts() -> dict[str, str]:
    """The proxy's mounted files, by where they land in the container."""
    mounts = [mount.split(":") for mount in compose()["services"]["proxy"]["volumes"]]
    return {target: source for source, target, _ in mounts}


def proxy_template() -> str:
    # The image renders the template there.
    return (ROOT / proxy_mounts()["/etc/nginx/templates/default.conf.template"]).read_text()


def upstream_block() -> str:
    return re.search(r"\nupstream arena_web \{\n(.*?)\n\}", proxy_template(), re.S).group(1)  # type: ignore[union-attr]


def test_the_proxy_holds_thousands_of_waits_and_passes_the_stream_on_unbuffered() -> None:
    main = (ROOT / proxy_mounts()["/etc/nginx/nginx.conf"]).read_text()
    connections = re.search(r"worker_connections (\d+);", main)
    assert connections and int(connections.group(1)) >= 4000  # two per wait
    assert "include /etc/nginx/conf.d/*.conf;" in main  # where the image renders the template
    stream = re.search(r"location /api/stream/ \{(.*?)\}", proxy_template(), re.DOTALL)
    assert stream and "proxy_buffering off;" in stream.group(1)


def test_the_proxy_gets_every_variable_its_config_file_uses() -> None:
    proxy = compose()["services"]["proxy"]
    env = proxy["environment"]
    used = set(re.findall(r"\$\{(\w+)\}", proxy_template()))
    assert used == {name for name in env if name != "NGINX_ENVSUBST_FILTER"}
    # Only these are filled in: nginx's own $host and friends must stay as they are.
    assert all(re.match(env["NGINX_ENVSUBST_FILTER"], name) for name in used)
    assert env["NGINX_UPSTREAM"] == "web:8000"
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"


def test_the_proxy_restarts_after_compose_recreates_web_since_it_resolves_web_once() -> None:
    """A web container recreated at a new address gave 502s until the proxy restarted."""
    assert compose()["services"]["proxy"]["depends_on"]["web"]["restart"] is True
    assert "resolver" not in proxy_template()  # so nothing else re-resolves `web`


def test_the_proxy_outwaits_the_longest_long_poll() -> None:
    from games.selectors import LONG_POLL_MAX_SECONDS

    (read_timeout,) = re.findall(r"proxy_read_timeout (\d+)s;", proxy_template())
    assert int(read_timeout) > LONG_POLL_MAX_SECONDS


def test_rate_limits_count_the_proxy_compose_puts_in_front() -> None:
    """Behind compose's one proxy with NUM_PROXIES=0, every client has the proxy's address:
    60 wrong passwords from anyone locked everyone out of the password login."""
    assert app_environment()["NUM_PROXIES"] == "${NUM_PROXIES:-1}"
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in proxy_template()


def test_the_image_runs_in_production_mode_by_default() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    build, run = dockerfile.split("collectstatic", 1)
    assert "ENV ARENA_PRODUCTION=true" in run and "ENV ARENA_PRODUCTION" not in build


def dockerfile_cmd() -> list[str]:
    dockerfile = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    (cmd,) = re.findall(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE)
    return json.loads(cmd)


def gunicorn_keepalive(argv: list[str]) -> int:
    """The keep-alive gunicorn runs with, given its command line (its own parser)."""
    from gunicorn.config import Config

    assert argv[0] == "gunicorn"
    return int(Config().parser().parse_args(argv[1:]).keepalive or Config().keepalive)


def test_the_web_service_keeps_idle_connections_longer_than_the_proxy_reuses_them() -> None:
    """nginx reuses an idle upstream connection for up to its keepalive_timeout; a server that
    closed it first (gunicorn's default: 2 s) made the next POST sent on it a 502."""
    (timeout,) = re.findall(
        r"keepalive_timeout (\d+)s;", upstream_block()
    )
    compose_web = gunicorn_keepalive(command("web"))
    image_web = gunicorn_keepalive(dockerfile_cmd())
    assert compose_web > int(timeout) and image_web > int(timeout)


def test_the_worker_class_hands_gunicorns_keepalive_to_uvicorn() -> None:
    import logging
    import os

    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    from arena.workers import Worker

    argv = command("web")
    cfg = Config()
    for name, value in vars(cfg.parser().parse_args(argv[1:])).items():
        if value is not None and name in cfg.settings:
            cfg.set(name, value)
    loggers = {name: logging.getLogger(name) for name in ("uvicorn.error", "uvicorn.access")}
    saved = {name: (lg.handlers, lg.level, lg.propagate) for name, lg in loggers.items()}
    try:
        worker = Worker(0, os.getpid(), [], None, 30, cfg, Logger(cfg))
    finally:  # the worker points uvicorn's loggers at gunicorn's: put them back
        for name, (handlers, level, propagate) in saved.items():
            loggers[name].handlers, loggers[name].propagate = handlers, propagate
            loggers[name].setLevel(level)
    assert worker.config.timeout_keep_alive == gunicorn_keepalive(argv) == 75


def queue_consumers(env: dict[str, str]) -> dict[str, set[str]]:
    """The worker services of compose, by the queues they read (-Q), given ``env``."""
    consumers: dict[str, set[str]] = {}
    for name, service in compose()["services"].items():
        argv = command(name, env) if "command" in service else []
        if argv[:4] != ["celery", "-A", "arena", "worker"]:
            continue
        assert "-Q" in argv, f"{name} reads every queue, matches included"
        for queue in argv[argv.index("-Q") + 1].split(","):
            consumers.setdefault(queue, set()).add(name)
    return consumers


@pytest.mark.parametrize("dotenv", [
    {},
    {"CELERY_QUEUE": "site-a", "TOURNAMENT_QUEUE": "site-a.matches",
     "CELERY_TURN_QUEUE": "site-a.turns"},
], ids=["compose-defaults", "names-from-dotenv"])
def test_every_queue_has_a_worker_and_matches_never_share_one_with_turns_or_clocks(
    dotenv: dict[str, str],
) -> None:
    """A match task runs for the whole match: behind it in one worker, live tables' bot
    turns and turn clocks waited for hours."""
    from tests.arena.test_queue_routing import routing

    env = {name: interpolate(value, dotenv) for name, value in app_environment().items()
           if name in ("CELERY_QUEUE", "TOURNAMENT_QUEUE", "CELERY_TURN_QUEUE")}
    found = routing(**env)
    consumers = queue_consumers(dotenv)
    declared = {name for name, _, _ in found["queues"]}
    assert declared <= set(consumers), f"no worker reads {declared - set(consumers)}"
    matches = consumers[found["routes"]["arena.tasks.match_play"]]
    turns = consumers[found["routes"]["bots.tasks.bot_turn"]]
    clocks = consumers[found["routes"]["games.tasks.turn_clock_sweep"]]  # and turn_clock_check
    assert matches and turns and clocks
    assert not matches & (turns | clocks)


def app_services() -> dict[str, dict[str, Any]]:
    """The services that run the project's image (x-app)."""
    return {name: service for name, service in compose()["services"].items()
            if service.get("image") == compose()["x-app"]["image"]}


def compose_doc_bullet(starting: str) -> str:
    section = CONFIGURATION.split("## Under docker compose", 1)[1].split("\n## ", 1)[0]
    (bullet,) = [b for b in section.split("\n- ") if b.startswith(starting)]
    return bullet


def test_every_variable_the_configuration_documents_reaches_the_app_services_from_dotenv(
) -> None:
    """Compose once passed only the variables its environment named: 21 documented ones
    (TOURNAMENT_*, BOTS_*, STREAM_*, ...) set in .env never reached the containers."""
    services = app_services()
    assert set(services) == {"migrate", "web", "worker", "matches", "beat"}
    for name, service in services.items():
        assert {"path": ".env", "required": False} in service["env_file"], name
    documented = re.findall(
        r"^\| `(\w+)` \|", CONFIGURATION.split("## Under docker compose", 1)[0], re.M
    )
    assert len(documented) > 50 and "TOURNAMENT_MATCH_CONCURRENCY" in documented
    env = app_environment()
    reads_itself = compose_doc_bullet("Compose's own `environment:` entries")
    fixed = compose_doc_bullet("Fixed by compose")
    for name, value in env.items():
        if f"${{{name}" in value:  # .env's value (or the shell's) reaches it
            assert f"`{name}`" in reads_itself, f"docs/configuration.md: {name} reads .env"
        else:  # .env cannot change it: the docs must say so
            assert f"`{name}`" in fixed, f"docs/configuration.md: compose fixes {name}"


def setting_default(name: str) -> int:
    return int(re.search(rf'env\.int\("{name}", (\d+)', SETTINGS_SOURCE).group(1))  # type: ignore[union-attr]


def option(argv: list[str], flag: str) -> int:
    (value,) = [arg.split("=", 1)[1] for arg in argv if arg.startswith(f"{flag}=")]
    return int(value)


def test_postgres_allows_the_connections_the_default_processes_keep_with_room_to_grow() -> None:
    """Each web process keeps WEB_THREADS + WAIT_THREADS + 1 (LISTEN) connections: at
    WEB_WORKERS=4 that exceeded postgres:15's default max_connections (100)."""
    per_web = setting_default("WEB_THREADS") + setting_default("WAIT_THREADS") + 1
    celery_processes = sum(
        option(command(name), "--concurrency") for name in ("worker", "matches")
    )
    needed = option(command("web"), "--workers") * per_web + 2 * celery_processes + 2
    (setting,) = [interpolate(arg) for arg in compose()["services"]["postgres"]["command"]
                  if "max_connections=" in arg]
    usable = int(setting.split("=")[1]) - 3  # superuser_reserved_connections
    assert usable >= 2 * needed
    assert usable >= 4 * per_web + 2 * celery_processes + 2  # WEB_WORKERS=4 fits
    assert f"2 x {per_web} + 2 x (2 + 2) + 2 = {needed}" in CONFIGURATION


def test_the_proxy_trusts_a_forwarded_proto_only_behind_a_tls_proxy_of_ones_own() -> None:
    """Trusted, a client's X-Forwarded-Proto: https passed for TLS (SECURE_PROXY_SSL_HEADER).
    Compose trusts it when ARENA_HTTPS=true says a TLS proxy is in front (its https must get
    through, or every request is redirected), or when told to."""
    trust = compose()["services"]["proxy"]["environment"]["NGINX_TRUST_FORWARDED_PROTO"]
    assert interpolate(trust) == "false"
    assert interpolate(trust, {"ARENA_HTTPS": "true"}) == "true"
    assert interpolate(trust, {"ARENA_HTTPS": "true", "NGINX_TRUST_FORWARDED_PROTO": "no"}) == "no"
    assert interpolate(app_environment()["ARENA_HTTPS"]) == "false"
    # Whatever the flag, the header reaches the web service only through the map.
    template = proxy_template()
    assert "$http_x_forwarded_proto;" not in template
    assert template.count("proxy_set_header X-Forwarded-Proto $arena_forwarded_proto;") == 2


@pytest.mark.parametrize(("failures", "exit_code", "runs"), [(0, 0, 1), (2, 0, 3), (9, 1, 5)])
def test_a_failed_migrate_is_tried_again_a_few_times_then_given_up(
    tmp_path: Path, failures: int, exit_code: int, runs: int
) -> None:
    """A migration that waited out the lock timeout behind the old web's transactions during
    an upgrade left the whole stack down (everything waits for ``migrate``) until someone ran
    it again: it is tried five times, 15 s apart. Run as compose runs it, with stand-ins for
    ``python`` (failing ``failures`` times) and ``sleep``."""
    import os
    import stat
    import subprocess

    count = tmp_path / "runs"
    count.write_text("0")
    stubs = {
        "python": f"n=$(( $(cat {count}) + 1 )); echo $n > {count}; [ $n -gt {failures} ]",
        "sleep": "exit 0",
    }
    for name, body in stubs.items():
        stub = tmp_path / name
        stub.write_text(f"#!/bin/sh\n{body}\n")
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    path = f"{tmp_path}:/usr/bin:/bin"  # the stand-ins first
    done = subprocess.run(command("migrate"), env={**os.environ, "PATH": path},
                          capture_output=True, text=True, timeout=30)
    assert (done.returncode, int(count.read_text())) == (exit_code, runs), done.stdout


def test_compose_passes_the_database_password_as_written_not_inside_the_url() -> None:
    """It was pasted raw into DATABASE_URL: a / ? or # in it stopped every app service at
    start-up (the URL did not parse), and a %XX in it was decoded, a password other than the
    one the postgres image set."""
    password = "pa/ss?w#rd%65"
    env = {"POSTGRES_PASSWORD": password, "SECRET_KEY": "x"}
    assert interpolate(app_environment()["DATABASE_PASSWORD"], env) == password
    assert password not in interpolate(app_environment()["DATABASE_URL"], env)
    postgres = compose()["services"]["postgres"]
    assert interpolate(postgres["environment"]["POSTGRES_PASSWORD"], env) == password


def test_the_postgres_health_check_asks_over_tcp_as_the_app_connects() -> None:
    """On a fresh volume the image first runs a server on its Unix socket only, which a
    socket check calls ready while the app's TCP connections are still refused."""
    test = " ".join(compose()["services"]["postgres"]["healthcheck"]["test"])
    assert "pg_isready -h 127.0.0.1" in test


def test_compose_refuses_to_start_with_env_example_as_copied() -> None:
    """The postgres image sets its password once, when it makes its volume: a placeholder
    started once stays the database's password. ``.env.example`` leaves it empty, so compose
    (``${POSTGRES_PASSWORD:?...}``) refuses until it is set."""
    example = dict(
        line.split("=", 1) for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert example["POSTGRES_PASSWORD"] == ""
    with pytest.raises(AssertionError, match="POSTGRES_PASSWORD"):
        interpolate(app_environment()["DATABASE_PASSWORD"], example)
    assert "CHANGE-ME" not in interpolate(app_environment()["DATABASE_URL"], example)
