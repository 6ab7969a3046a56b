"""Uno Arena settings: one module, every value from the environment, embedded defaults.

With no environment at all you get the embedded default: an SQLite file in the project folder,
Celery tasks run in-process, DEBUG on, bound to localhost. ``ARENA_PRODUCTION=true`` is the one
switch for a real deployment: it turns DEBUG off and requires ``SECRET_KEY`` and
``ALLOWED_HOSTS`` from the environment. ``docs/configuration.md`` lists every variable.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from arena.env import Env, parse_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
env = Env()

PRODUCTION = env.bool("ARENA_PRODUCTION", False)
DEBUG = env.bool("DEBUG", not PRODUCTION)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG=true is refused when ARENA_PRODUCTION=true.")

# The embedded key only ever signs sessions on a developer's own machine.
_EMBEDDED_SECRET_KEY = "embedded-development-key-not-for-production-use-6e1f0c3a9b"
if PRODUCTION:
    SECRET_KEY = env.required("SECRET_KEY", "when ARENA_PRODUCTION=true")
    # Django's own bar (check --deploy, W009): 50+ characters, 5+ different ones.
    if SECRET_KEY == _EMBEDDED_SECRET_KEY or len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
        raise ImproperlyConfigured(
            "SECRET_KEY must be a random value of 50 or more characters (and not the embedded "
            "development key) when ARENA_PRODUCTION=true."
        )
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
    if not ALLOWED_HOSTS or "*" in ALLOWED_HOSTS:
        raise ImproperlyConfigured(
            "ALLOWED_HOSTS must name this site's hosts (not *) when ARENA_PRODUCTION=true."
        )
else:
    SECRET_KEY = env.str("SECRET_KEY", _EMBEDDED_SECRET_KEY)
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "axes",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "arena",
    "games",
    "bots",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.static.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A query parameter the operation's schema does not name is a 400 on every API operation.
    "core.schema.KnownQueryParameters",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns an admin login lockout into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "arena.urls"
WSGI_APPLICATION = "arena.wsgi.application"
ASGI_APPLICATION = "arena.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# SQLite by default. WAL lets readers run beside the writer, IMMEDIATE takes the write lock at
# BEGIN (so two writers queue on the busy timeout instead of failing with "database is locked"
# half-way through a transaction), and the timeout is how long a writer waits for its turn.
DATABASE_URL = env.url("DATABASE_URL", ("postgres", "postgresql", "sqlite"))
if PRODUCTION and "CHANGE-ME" in (DATABASE_URL or ""):
    raise ImproperlyConfigured("DATABASE_URL still has the CHANGE-ME placeholder of .env.example.")
# The password as written, instead of the URL's: in a URL a / ? # or % must be percent-encoded
# (compose builds its URL from POSTGRES_PASSWORD, which the postgres image takes raw).
DATABASE_PASSWORD = env.as_written("DATABASE_PASSWORD")
DB_CONN_MAX_AGE = env.int("DB_CONN_MAX_AGE", 600, minimum=0)
# The few statements every move runs (games/rows) and the token lookup of every request with a
# token (core/authentication.py) are prepared once per PostgreSQL connection. A pooler in
# transaction mode needs prepared statement support (PgBouncer 1.22+ with
# max_prepared_statements: psycopg sends DEALLOCATE ALL after a rollback) or this off.
DB_PREPARED_STATEMENTS = env.bool("DB_PREPARED_STATEMENTS", True)
SQLITE_PATH = Path(env.str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")))
# How long a statement waits for a row lock before it gives up (PostgreSQL's lock_timeout; 0:
# forever). Under the proxy's 60 s: a request stuck behind a lock (a long transaction, someone's
# psql session) is rolled back and answered 503 `database_busy`, instead of committing after
# the proxy has answered 504 for it. Migrations and workers wait as long, then fail and retry.
DB_LOCK_TIMEOUT_SECONDS = env.int("DB_LOCK_TIMEOUT_SECONDS", 20, minimum=0)
# How long PostgreSQL lets a session sit in an open transaction with no statement running
# (idle_in_transaction_session_timeout; 0: forever) before it closes it, its locks released. A
# process stopped or frozen mid-transaction (SIGSTOP, a paused VM, a partition) held its rows
# locked until it came back: a match's worker held up the takeover of its match, and a worker
# rating a batch every other match of the ladder. Our own transactions never pause that long.
DB_IDLE_IN_TRANSACTION_SECONDS = env.int("DB_IDLE_IN_TRANSACTION_SECONDS", 60, minimum=0)

if DATABASE_URL and not DATABASE_URL.startswith("sqlite"):
    # Persistent connections with health checks: a new connection per request served a quarter
    # of the throughput in our measurements. The engine is Django's with a health check that
    # polls the socket before it asks the server (core/postgresql/base.py says why).
    DATABASES = {
        "default": parse_database_url(
            DATABASE_URL, conn_max_age=DB_CONN_MAX_AGE, conn_health_checks=True
        )
    }
    DATABASES["default"]["ENGINE"] = "core.postgresql"
    if DATABASE_PASSWORD:
        DATABASES["default"]["PASSWORD"] = DATABASE_PASSWORD
    if DB_PREPARED_STATEMENTS:
        # Django turns psycopg's prepared statements off (None); any number turns them back on
        # for the cursors that ask (games.rows). Django's own cursors bind on the client side,
        # which psycopg never prepares, so the threshold itself is never reached.
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
    timeouts = {"lock_timeout": DB_LOCK_TIMEOUT_SECONDS,
                "idle_in_transaction_session_timeout": DB_IDLE_IN_TRANSACTION_SECONDS}
    if any(timeouts.values()):
        options = DATABASES["default"].setdefault("OPTIONS", {})
        given = options.get("options", "")  # DATABASE_URL's own ?options=, if any
        options["options"] = " ".join([given, *(
            f"-c {name}={seconds * 1000}" for name, seconds in timeouts.items() if seconds
        )]).strip()
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": parse_database_url(DATABASE_URL)["NAME"] if DATABASE_URL else SQLITE_PATH,
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": env.int("SQLITE_BUSY_TIMEOUT", 20, minimum=1),
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                ),
            },
            # Tests use a file too: an in-memory database shares one cache between threads,
            # where a concurrent writer fails at once ("table is locked") instead of waiting.
            # One name per test process: a stale -wal file must never meet a new database.
            "TEST": {"NAME": str(Path(tempfile.gettempdir()) / f"uno-arena-test-{os.getpid()}.db")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache (throttles, idempotency keys) ---------------------------------------------------
CACHE_URL = env.url("CACHE_URL", ("redis", "rediss"))
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            # An unreachable cache is told within a second, not after the kernel's timeouts:
            # the throttles then fail open (core/throttling.py) instead of holding a thread.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# A finished game's replay is built once and kept this long in the cache (games/selectors.py).
REPLAY_CACHE_SECONDS = env.int("REPLAY_CACHE_SECONDS", 3600, minimum=1)

# --- Celery -------------------------------------------------------------------------------
# Without a broker, tasks run in-process (eager), so the embedded default needs no Redis.
CELERY_BROKER_URL = env.url("CELERY_BROKER_URL", ("redis", "rediss", "memory"))
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.url("CELERY_RESULT_BACKEND", ("redis", "rediss")) or (
    CELERY_BROKER_URL if (CELERY_BROKER_URL or "").startswith("redis") else None
)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", 3600, minimum=1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The queue the web processes send to and workers read; deployments sharing a Redis each
# need their own.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", "celery")
# How long Redis keeps a task a worker took but has not acknowledged (every countdown is one)
# before giving it to another worker: a countdown longer than this runs twice or more.
# A tournament's match is one task that runs as long as its games (TOURNAMENT_MATCH_TIME_LIMIT
# at most), so the default is well above that: a match task redelivered while still running
# would find its match claimed and do nothing, but it would hold a worker for nothing.
BROKER_VISIBILITY_TIMEOUT = env.int("BROKER_VISIBILITY_TIMEOUT", 6 * 3600, minimum=60)
# A task is sent after its change commits, in the request that made it (a turn clock's check,
# a bot's decision, a tournament's matches): a broker that does not answer must fail the send
# within about a second, so the request is answered and core.broker's fallbacks take over.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    # An unreachable broker is told at once, not after the kernel's connect timeout.
    "socket_connect_timeout": 1,
    # A broker that accepts but never answers (stopped with SIGSTOP, a half-open connection):
    # kombu's default (None) waits forever on the reply to the connection's PING or to the
    # LPUSH of the message. Workers are not cut short by it: they wait for tasks on the event
    # loop (BRPOP read only once readable), not in a blocking read.
    "socket_timeout": 1,
    # (health_check_interval stays kombu's 25 s: its PING is bounded by socket_timeout too.)
}
# Publishing is tried once. Each kombu retry costs a stalled broker another socket_timeout
# (measured: 2 s a send with one retry, 1 s with none), and a retry is not what carries a send
# across a Redis restart: redis-py replaces a pooled connection the server closed by itself.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 0}
# Each turn's clock is checked by a task scheduled for its deadline when the turn is at most
# TURN_CLOCK_TASK_MAX_SECONDS long. A longer turn gets no task (a countdown of hours would sit
# in a worker's memory and in Redis for hours, and outlive the visibility timeout): the sweep
# (run by ``celery beat``) settles it, within TURN_CLOCK_SWEEP_SECONDS of its deadline. The
# sweep also catches a table whose task was lost, so none stays frozen for long.
TURN_CLOCK_SWEEP_SECONDS = env.int("TURN_CLOCK_SWEEP_SECONDS", 30, minimum=1)
TURN_CLOCK_TASK_MAX_SECONDS = env.int("TURN_CLOCK_TASK_MAX_SECONDS", 300, minimum=0)
if TURN_CLOCK_TASK_MAX_SECONDS * 2 > BROKER_VISIBILITY_TIMEOUT:
    raise ImproperlyConfigured(
        "TURN_CLOCK_TASK_MAX_SECONDS must be at most half of BROKER_VISIBILITY_TIMEOUT: a "
        "longer countdown is given to a second worker before it runs."
    )
# --- Tournaments (arena/runner.py) -------------------------------------------------------
# Elo per bot and rule set (docs/ratings.md).
ELO_START = env.int("ELO_START", 1500, minimum=0)
ELO_K = env.int("ELO_K", 16, minimum=1)
# Games a match task plays at once (bot calls are I/O). 8: the bench's sweep
# (docs/scaling.md, "Match concurrency: the default"); a bot may get that many calls at once.
TOURNAMENT_MATCH_CONCURRENCY = env.int("TOURNAMENT_MATCH_CONCURRENCY", 8, minimum=1)
# A match task goes on with its tournament's next pending matches as its own last games end,
# so that a worker's slots do not drain with each match's slowest game (arena.runner).
TOURNAMENT_CHAIN_MATCHES = env.bool("TOURNAMENT_CHAIN_MATCHES", True)
# The queue match tasks go to (a deployment may give matches workers of their own).
TOURNAMENT_QUEUE = env.str("TOURNAMENT_QUEUE", CELERY_TASK_DEFAULT_QUEUE)
# A worker playing a match renews its claim every TOURNAMENT_HEARTBEAT_SECONDS; a claim not
# renewed for TOURNAMENT_CLAIM_STALE_SECONDS is a dead worker's, and another may take the
# match over (the sweep re-sends its task).
TOURNAMENT_HEARTBEAT_SECONDS = env.int("TOURNAMENT_HEARTBEAT_SECONDS", 10, minimum=1)
TOURNAMENT_CLAIM_STALE_SECONDS = env.int("TOURNAMENT_CLAIM_STALE_SECONDS", 60, minimum=2)
if TOURNAMENT_CLAIM_STALE_SECONDS <= TOURNAMENT_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "TOURNAMENT_CLAIM_STALE_SECONDS must be longer than TOURNAMENT_HEARTBEAT_SECONDS."
    )
# The sweep (celery beat): re-sends the tasks of matches left pending or claimed by a dead
# worker, and finalizes tournaments whose last match ended without finalizing them.
TOURNAMENT_SWEEP_SECONDS = env.int("TOURNAMENT_SWEEP_SECONDS", 60, minimum=1)
# The longest one match task may run (its Celery hard time limit).
TOURNAMENT_MATCH_TIME_LIMIT = env.int("TOURNAMENT_MATCH_TIME_LIMIT", 4 * 3600, minimum=60)
if TOURNAMENT_MATCH_TIME_LIMIT >= BROKER_VISIBILITY_TIMEOUT:
    raise ImproperlyConfigured(
        "TOURNAMENT_MATCH_TIME_LIMIT must be below BROKER_VISIBILITY_TIMEOUT: a match still "
        "running would be given to a second worker."
    )

# Queues of their own (docs/scaling.md), both optional: a tournament's matches
# (TOURNAMENT_QUEUE: long tasks, a whole pairing each) and bot-seat turns of live tables
# (CELERY_TURN_QUEUE: one short decision each), so that worker pools can be sized and placed
# per kind and a long tournament never delays a live table's turns. Empty: CELERY_QUEUE.
# A worker started without -Q reads every queue named here.
CELERY_TURN_QUEUE = env.str("CELERY_TURN_QUEUE", "")
CELERY_TASK_ROUTES = {
    task: {"queue": queue}
    for task, queue in (("arena.tasks.match_play", TOURNAMENT_QUEUE),
                        ("bots.tasks.bot_turn", CELERY_TURN_QUEUE))
    if queue and queue != CELERY_TASK_DEFAULT_QUEUE
}
if CELERY_TASK_ROUTES:
    from kombu import Exchange, Queue

    # Each its own exchange and routing key, as Celery makes a queue it was not told of: a
    # shared key would copy every task into each queue bound with it.
    CELERY_TASK_QUEUES = [
        Queue(name, Exchange(name), routing_key=name) for name in dict.fromkeys(
            [CELERY_TASK_DEFAULT_QUEUE, TOURNAMENT_QUEUE, CELERY_TURN_QUEUE]) if name
    ]

CELERY_BEAT_SCHEDULE = {
    "tournament-sweep": {
        "task": "arena.tasks.tournament_sweep",
        "schedule": TOURNAMENT_SWEEP_SECONDS,
        "options": {"expires": TOURNAMENT_SWEEP_SECONDS},
    },
    "turn-clock-sweep": {
        "task": "games.tasks.turn_clock_sweep",
        "schedule": TURN_CLOCK_SWEEP_SECONDS,
        "options": {"expires": TURN_CLOCK_SWEEP_SECONDS},  # a late sweep is a useless one
    },
}
# For compose's healthchecks of the celery services: a file a worker touches every
# CELERY_ALIVE_SECONDS while it takes tasks, and beat at every tick (arena/liveness.py). Empty:
# none.
CELERY_ALIVE_FILE = env.str("CELERY_ALIVE_FILE", "")
CELERY_ALIVE_SECONDS = env.int("CELERY_ALIVE_SECONDS", 15, minimum=1)
CELERY_BEAT_SCHEDULER = "arena.liveness:AliveScheduler"
# Beat wakes at least this often, whatever its schedule, so its file stays as fresh as a
# worker's (a sweep set to more than compose's two minutes would otherwise look dead).
CELERY_BEAT_MAX_LOOP_INTERVAL = CELERY_ALIVE_SECONDS if CELERY_ALIVE_FILE else 300

# --- Bots -----------------------------------------------------------------------------------
# Bots are HTTP servers at addresses their owners give. Outside production they usually run on
# this machine or the local network, so private and loopback addresses are allowed there; in
# production they are refused (link-local, metadata, multicast and reserved ones always are).
BOTS_ALLOW_PRIVATE = env.bool("BOTS_ALLOW_PRIVATE", not PRODUCTION)
# A bot on the public internet is given over TLS: over plain http anyone on the way could read
# the hand each call carries and answer in the bot's place (the calls are signed, the answers
# not). Checked when a URL is registered or changed. Off by default where private addresses
# are allowed (a development server; bots on your own network).
BOTS_REQUIRE_HTTPS = env.bool("BOTS_REQUIRE_HTTPS", PRODUCTION and not BOTS_ALLOW_PRIVATE)
# The longest a table may give a bot to answer one call (connect, send and read together).
BOTS_MAX_TIMEOUT_SECONDS = env.int("BOTS_MAX_TIMEOUT_SECONDS", 10, minimum=1)
# The time a bot gets for one decision (capped by the above and by the table's turn clock).
BOTS_TURN_TIMEOUT_MS = env.int("BOTS_TURN_TIMEOUT_MS", 1000, minimum=1)
# Who plays bot seats: "celery" (a task per decision), "thread" (a pool in the web process:
# the embedded default, which has no broker), "off" (a driver such as a tournament worker
# plays its games itself). Empty: "thread" without a broker, else "celery".
BOTS_RUNNER = env.choice("BOTS_RUNNER", "", ("celery", "thread", "off"))
BOTS_THREADS = env.int("BOTS_THREADS", 4, minimum=1)
# After a secret rotation, calls carry the old secret's signature too for this long.
BOTS_SECRET_GRACE_HOURS = env.int("BOTS_SECRET_GRACE_HOURS", 24, minimum=0)
# Calls kept in each bot's log (the per-bot aggregates are kept for good).
BOTS_CALL_LOG_KEEP = env.int("BOTS_CALL_LOG_KEEP", 500, minimum=10)

# --- Serving and waiting requests (arena/serving.py, games/waits.py) -------------------------
# The web process (arena.asgi under uvicorn workers) serves the request/response endpoints on
# this many threads, like gunicorn's gthread workers did; the waiting requests
# (view/events/moves?wait=, the stream) wait on its event loop, holding no thread, and do their
# database work on WAIT_THREADS threads. Each thread keeps its own database connection.
WEB_THREADS = env.int("WEB_THREADS", 16, minimum=1)
WAIT_THREADS = env.int("WAIT_THREADS", 8, minimum=1)
# Waits without a thread (the ASGI serving) one web process holds at once: each costs a socket
# and a few kilobytes. Over it, 429 too_many_waits with Retry-After.
WAIT_MAX_PER_PROCESS = env.int("WAIT_MAX_PER_PROCESS", 5000, minimum=1)
# The web process's garbage collector runs a full collection only after this many of its
# middle-generation ones (Python's default: 10). Every open stream or wait keeps a few hundred
# objects alive, and a full collection scans them all with the process stopped: with 1000
# streams per process each took 100 to 280 ms, every few seconds (docs/scaling.md). Cycles
# left by closed connections wait longer to be freed instead.
GC_FULL_EVERY = env.int("GC_FULL_EVERY", 1000, minimum=1)
# Waits served on a thread (a WSGI server: runserver, gunicorn's gthread workers) hold that
# thread: keep this well below the server's threads so other requests always find one.
LONG_POLL_MAX_PER_PROCESS = env.int("LONG_POLL_MAX_PER_PROCESS", 8, minimum=1)
# One user's waits at once in one web process (of the thread-held kind, at most half of
# LONG_POLL_MAX_PER_PROCESS).
LONG_POLL_MAX_PER_USER = env.int("LONG_POLL_MAX_PER_USER", 32, minimum=1)
# --- The event stream (GET /api/stream/, games/stream_api.py) -----------------------------------
# An open stream costs a socket and a little memory, no thread: these are fairness caps, counted
# in each server process (past one: 429 too_many_streams with Retry-After).
STREAM_MAX_PER_USER = env.int("STREAM_MAX_PER_USER", 16, minimum=1)
STREAM_MAX_PER_PROCESS = env.int("STREAM_MAX_PER_PROCESS", 20000, minimum=1)
# A heartbeat this often on an idle stream (proxies and clients see it is alive).
STREAM_HEARTBEAT_SECONDS = env.int("STREAM_HEARTBEAT_SECONDS", 15, minimum=1)
# A resumed stream (Last-Event-ID / since) still catches the end of games over for this long.
STREAM_RESUME_SECONDS = env.int("STREAM_RESUME_SECONDS", 86400, minimum=60)
# --- Games ---------------------------------------------------------------------------------
# Open tables (created, not yet started) one user may have at a time: the lobby's defence
# against table spam, with its ordering (one table per creator before anyone's second).
GAMES_MAX_OPEN_TABLES = env.int("GAMES_MAX_OPEN_TABLES", 10, minimum=1)

# --- Auth and passwords -------------------------------------------------------------------
# django-axes first: it refuses a locked-out admin login before any password is checked.
AUTHENTICATION_BACKENDS = [
    "arena.admin_guard.AdminLoginBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# The admin login form: after this many wrong passwords for one username from one client
# address, that pair is refused (429) for the cool-off time. The API's password login is
# throttled by THROTTLE_TOKEN instead (arena/admin_guard.py keeps axes to the admin).
AXES_ONLY_ADMIN_SITE = True
AXES_HANDLER = "arena.admin_guard.AdminOnlyHandler"
AXES_FAILURE_LIMIT = env.int("ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(seconds=env.int("ADMIN_LOGIN_COOLOFF_SECONDS", 900, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "arena.admin_guard.client_address"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files: served by the app itself (WhiteNoise), so the docs work offline ----------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside production the files are found where the apps keep them (no collectstatic needed).
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# --- REST API -------------------------------------------------------------------------------
# Whether anyone may create an account over the API (POST /api/accounts/); false: staff
# create accounts in the admin (a private ladder).
ACCOUNTS_SIGNUP_OPEN = env.bool("ACCOUNTS_SIGNUP_OPEN", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "core.authentication.PasswordNotAccepted",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON in, JSON out: one documented body format per operation (bots speak JSON), sent
    # as exactly application/json and within the limits of core/parsers.py.
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.parsers.ExactContentNegotiation",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    "DEFAULT_THROTTLE_RATES": {
        "signup": env.rate("THROTTLE_SIGNUP", "20/hour"),
        "token": env.rate("THROTTLE_TOKEN", "60/hour"),
        "move": env.rate("THROTTLE_MOVE", "6000/minute"),
        "replay": env.rate("THROTTLE_REPLAY", "30/minute"),
        "verify": env.rate("THROTTLE_VERIFY", "30/hour"),
    },
    # Rate limits count per client address, which is REMOTE_ADDR unless this many proxies of
    # our own sit in front (each appends to X-Forwarded-For; anything further left is the
    # client's own word). 0: a client cannot pick its address by sending the header.
    "NUM_PROXIES": env.int("NUM_PROXIES", 0, minimum=0),
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # One error body everywhere: {"code", "detail", ...} (see core/api_errors.py).
    "EXCEPTION_HANDLER": "core.api_errors.exception_handler",
}

REST_KNOX = {
    # Tokens live until revoked unless the client asks for an expiry when creating one.
    "TOKEN_TTL": None,
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_PREFIX": "uno_",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Uno Arena API",
    "DESCRIPTION": (
        "Play Uno over REST and pit bots against each other. Authenticate with "
        "`Authorization: Token <key>` (or `Bearer <key>`); get a key from `POST /api/tokens/`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Stable enum names for generated clients (otherwise named after the first field found).
    "ENUM_NAME_OVERRIDES": {
        "CardCode": "games.uno.cards.CODES",
        "Color": "games.uno.cards.COLORS",
        "Phase": "games.uno.state.PHASE_NAMES",
        "MoveType": "games.schema.MOVE_TYPES",
        "Direction": "games.schema.DIRECTION_CHOICES",
        "HandEndReason": "games.schema.HAND_END_REASONS",
        "EndReason": "games.schema.END_REASONS",
        "GameStatus": "games.models.GameStatus",
        "TournamentStatus": "arena.models.TournamentStatus",
        "MoveSource": "games.models.MoveSource",
        # The one-value discriminators of the unions (games.schema), after their variants.
        **{f"Pending{kind.title()}Type": [kind] for kind in
           ("drawn", "color", "challenge", "stack")},
        **{f"{kind.title()}EventKind": [kind] for kind in
           ("joined", "left", "started", "move", "strike", "forfeited", "finished", "aborted")},
        **{f"Stream{kind.title()}Type": [kind] for kind in
           ("turn", "ended", "heartbeat")},  # the others are the event kinds' enums
    },
    # A nullable enum is the enum's component, nullable (not a union with a "NullEnum").
    "ENUM_ADD_EXPLICIT_BLANK_NULL_CHOICE": False,
    # No "* `R0` - R0" list in the description of every field holding a card code.
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    # Bot protocol 1: what the server POSTs to bots (bots/protocol.py), as x-webhooks.
    "WEBHOOKS": [
        "bots.protocol.TURN_WEBHOOK",
        "bots.protocol.START_WEBHOOK",
        "bots.protocol.END_WEBHOOK",
    ],
    # A request body identical to its response component (a move) is the same component.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.merge_identical_request_components",
        "core.schema.every_operation_refuses_bad_input",
        "bots.protocol.webhooks_as_extension",
    ],
}

# --- Production hardening -----------------------------------------------------------------
if PRODUCTION:
    # Behind a TLS-terminating proxy (the usual deployment) the proxy sets X-Forwarded-Proto,
    # and it is trusted: the proxy next to the web service must overwrite a client's own
    # (compose's nginx does unless NGINX_TRUST_FORWARDED_PROTO says a TLS proxy of yours is
    # in front of it: deploy/nginx.conf.template).
    HTTPS = env.bool("ARENA_HTTPS", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = HTTPS
    SESSION_COOKIE_SECURE = HTTPS
    CSRF_COOKIE_SECURE = HTTPS
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0)
    # Both on by default, as check --deploy asks (W005, W021); a site whose parent domain
    # serves plain-HTTP hosts turns them off.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", HTTPS)
    SECURE_REDIRECT_EXEMPT = [r"^healthz/$"]

# The names Python's logging takes (WARN and FATAL too, its aliases).
LOG_LEVEL = env.choice("LOG_LEVEL", "INFO", ("NOTSET", "DEBUG", "INFO", "WARNING", "WARN",
                                             "ERROR", "CRITICAL", "FATAL"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own console handler (DEBUG only) printed every message the root handler
        # prints too: through the root only, once.
        "django": {"handlers": [], "propagate": True, "level": LOG_LEVEL},
        # A 4xx is the client's business, and the access log (runserver's, gunicorn's
        # --access-logfile) has a line for every request already; errors still log here.
        "django.request": {"level": "ERROR"},
    },
}
