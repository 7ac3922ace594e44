"""Settle's settings: everything a deployment changes comes from the environment (SPEC 3)."""

import ipaddress
import ssl
from datetime import timedelta
from pathlib import Path

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu.transport import TRANSPORT_ALIASES

from board.serving.environment import (
    env_bool,
    env_database,
    env_duration,
    env_duration_list,
    env_int,
    env_list,
    env_public_url,
    env_replicas,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "settle-development-key-not-for-production"

# Django's test set-up adds `testserver` for tests; no deployment should answer to it.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS", "http://localhost:8000,http://127.0.0.1:8000"
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    "ninja",
    # The second factor (SPEC 7.1); before moderation, whose admin hides their secrets.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "receipts",
    "board",
    "maintenance",
    "moderation",
    "axes",
]

MIDDLEWARE = [
    # Outermost, so the request's log line and duration cover everything below.
    "board.serving.middleware.ObservedRequestMiddleware",
    # Settle decides https itself, before anything asks request.is_secure().
    "board.serving.middleware.ForwardedProtoMiddleware",
    # /healthz, /readyz and /metrics answer here, before host validation (SPEC 12).
    "board.serving.middleware.ProbeMiddleware",
    # Before the rest, so it also reshapes what the other middleware answer under /api/v1/.
    "board.serving.middleware.ApiErrorShapeMiddleware",
    # A browser's foreign Origin on a POST under /api/v1/: 403 before anything else.
    "board.serving.middleware.BrowserOriginMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every HTML answer (CONTENT_SECURITY_POLICY below).
    "board.serving.middleware.PagePolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Above CommonMiddleware, so the 400 page for a disallowed Host carries it too.
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Host validation (a disallowed Host is 400) and Content-Length, on every route.
    "django.middleware.common.CommonMiddleware",
    # The agents' routes (/api/v1/ but its docs, /mcp) skip from here to MachineRoutesEnd:
    # a bearer-token API has no session, CSRF token, login or flash message.
    "board.serving.middleware.MachineRoutesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    # A completed login's answer carries the browser's device cookie (SPEC 7.1).
    "moderation.access.devices.DeviceCookieMiddleware",
    # The console session's idle limit and 24-hour cap (SPEC 7.1).
    "moderation.access.sessions.ConsoleSessionMiddleware",
    # Before any console or admin page: the second factor, when the account has one.
    "moderation.access.two_factor.SecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Last but one, as django-axes asks: it turns a locked login into the 429 page.
    "axes.middleware.AxesMiddleware",
    # Not in the chain: it marks where the agents' routes rejoin.
    "board.serving.middleware.MachineRoutesEnd",
]

ROOT_URLCONF = "board.urls"
WSGI_APPLICATION = "board.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

# --- Database ---------------------------------------------------------------------------
# Persistent connections on both engines: opening one (and, on SQLite, setting its
# pragmas) cost more than a whole post. A connection is kept for SETTLE_DB_CONN_MAX_AGE
# seconds. Before a request reuses one that sat idle for SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS
# it is checked (CONN_HEALTH_CHECKS; on PostgreSQL only after idling: board/serving/postgresql),
# so a server restart while the service is quiet costs one reconnect, not a failed
# request. Size: each gunicorn worker and each Celery process holds at most one
# connection, so (workers per host x hosts) + Celery processes must stay under
# max_connections.
#
# How long a statement waits for a row another transaction holds (SPEC 5.1: the claim's
# wait bound). On PostgreSQL the claim and the replay set it for their own transaction
# inside their statements (receipts/sql/postgresql/claim.sql, and the function
# receipts_replay: no round trip, and nothing a
# pooler in transaction mode loses); past it the claim answers in_progress, any other
# wait unavailable (not_committed).
SETTLE_CLAIM_WAIT_SECONDS = 5
DATABASES = {
    "default": env_database(
        "DATABASE_URL", f"sqlite:///{VAR_DIR / 'settle.sqlite3'}",
        conn_max_age=env_int("SETTLE_DB_CONN_MAX_AGE", 600, minimum=0),
        conn_health_checks=True,
    )
}
SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS = env_int("SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS", 1)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Every transaction is BEGIN IMMEDIATE: the write lock is taken up front, so the
    # claim, the tombstone check and the write serialize, and a busy database fails fast
    # (after the 5 s timeout) instead of deadlocking half-way through.
    # The pragmas run once per connection (init_command), which now lives for many
    # requests. What each keeps:
    # - journal_mode=WAL: readers never block the writer nor it them; a commit is an
    #   append to the log, atomic and crash-safe (it also persists in the file).
    # - synchronous=NORMAL: in WAL mode a commit survives a crash of the process; a
    #   power loss or OS crash may lose the last commits before the next checkpoint, but
    #   never corrupts the database or splits a transaction (entry and receipt stay
    #   together). FULL would fsync every commit; production runs PostgreSQL.
    # - temp_store=MEMORY, cache_size: sorting and the page cache in memory; no
    #   durability effect.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": SETTLE_CLAIM_WAIT_SECONDS,
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16000;"
        ),
    }
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_settle.sqlite3")}
else:
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "board.serving.postgresql"
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 5)
    # Nothing a pooler in transaction mode (PgBouncer) cannot carry: no startup `options`,
    # no session-level SET, and no server-side cursors (Django declares them WITH HOLD
    # outside a transaction, so they outlive it; Settle's code does not use .iterator()).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    # Prepared statements: with server-side binding psycopg prepares a statement on its
    # fifth run on a connection, so PostgreSQL stops parsing and planning the write
    # path's statements on every post (measured: its CPU per new post fell by about
    # 40%; docs/write-path.md, "The write path"). Off for a pooler in transaction mode that cannot
    # keep them (PgBouncer before 1.21, or without max_prepared_statements).
    if env_bool("SETTLE_DB_PREPARED_STATEMENTS", True):
        DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
        DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 5)

# Read replicas for public reads, each `replica_N` (SPEC 12.1; board/serving/replicas.py).
SETTLE_REPLICA_MAX_LAG = env_duration("SETTLE_REPLICA_MAX_LAG", "10s")
SETTLE_REPLICA_STICKY = env_duration("SETTLE_REPLICA_STICKY", "30s")
SETTLE_CACHE_URL = env_str("SETTLE_CACHE_URL").strip()
_replicas = env_replicas("SETTLE_REPLICA_URLS", DATABASES["default"], SETTLE_CACHE_URL)
DATABASES.update(_replicas)
SETTLE_REPLICA_ALIASES = list(_replicas)
if _replicas:
    DATABASE_ROUTERS = ["board.serving.replicas.ReplicaRouter"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 12},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Who gets in (SPEC 7.1): login throttling by django-axes (moderation/access/throttling.py) ---
# Axes' backend with Django's model backend in one: a locked username or address is
# refused before any password is checked, and a check is reserved before it starts, so
# attempts that arrive at once on many workers cannot pass the limits together.
AUTHENTICATION_BACKENDS = ["moderation.access.throttling.SettleAxesBackend"]
AXES_HANDLER = "moderation.access.throttling.SettleAxesHandler"
AXES_CLIENT_IP_CALLABLE = "moderation.access.throttling.login_address"
# A username longer than any account's is counted under a bounded key (axes' columns
# hold 255 characters).
AXES_USERNAME_CALLABLE = "moderation.access.throttling.login_username"
AXES_LOCKOUT_CALLABLE = "moderation.access.throttling.lockout_response"
# Counted apart: 5 failures for a username, or 20 from an address, within 15 minutes
# (the handler answers axes with this limit whenever either lock is on).
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
# A refused attempt during a lock does not prolong it: the page's end time holds.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = False
# Settle's audit log records logins; axes keeps only its counters, which the admin does
# not show (deleting one there would be an unaudited unlock).
AXES_DISABLE_ACCESS_LOG = True
# One row a failure: the sliding window the limits count in (moderation/access/throttling.py).
# The audit purge drops rows past a day; axes' own trim per username would delete the
# newest rows first (its default order), so it is set where it never acts.
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_ACCESS_FAILURE_LOG_PER_USER_LIMIT = 1_000_000
AXES_ENABLE_ADMIN = False
AXES_VERBOSE = False
# Console sessions (moderation/access/sessions.py): idle limit, and the cap since login (fixed).
SETTLE_CONSOLE_SESSION_IDLE = env_duration("SETTLE_CONSOLE_SESSION_IDLE", "8h")
SETTLE_CONSOLE_SESSION_MAX_AGE = timedelta(hours=24)
SESSION_COOKIE_AGE = int(SETTLE_CONSOLE_SESSION_MAX_AGE.total_seconds())
# The second factor (moderation/access/two_factor.py). django-otp's own throttling is off: a wrong
# code counts as a failed login, under the lock above.
SETTLE_CONSOLE_REQUIRE_2FA = env_bool("SETTLE_CONSOLE_REQUIRE_2FA", False)
OTP_TOTP_ISSUER = "Settle"
OTP_TOTP_THROTTLE_FACTOR = 0
OTP_STATIC_THROTTLE_FACTOR = 0

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files ----------------------------------------------------------------------
# Served by the app itself (whitenoise). After `collectstatic` (make run, a deploy) names
# carry a content hash and are cached for a year, compressed; without it (development,
# tests) the same URLs fall back to the plain names, found in the apps (board.serving.staticfiles).
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("SETTLE_STATIC_ROOT") or VAR_DIR / "static")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "board.serving.staticfiles.HashedStaticFilesStorage"},
}

LOGIN_URL = "/console/login/"

# --- Content-Security-Policy (django-csp), the browser's second line behind escaping --------
# Scripts only from Settle's own static files, or inline with this response's nonce
# ({{ request.csp_nonce }}); never 'unsafe-inline' or 'unsafe-eval' for scripts. Styles come
# from static files too; inline `style=` attributes (Swagger UI and the admin set some) are
# allowed through style-src-attr only. No page may be framed, post a form elsewhere or
# change its base URL. X-Frame-Options DENY, nosniff and Referrer-Policy come from Django's
# own defaults (XFrameOptionsMiddleware, SecurityMiddleware), kept here explicitly.
from csp.constants import NONCE, NONE, SELF  # noqa: E402

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "base-uri": [NONE],
    },
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# The API reads bodies itself so it can answer oversize ones with its own 400; Django's
# cap sits above SETTLE_MAX_BODY_BYTES so that check is the one that fires.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# --- Celery -------------------------------------------------------------------------------
# Redis (or any broker URL) when CELERY_BROKER_URL says so; otherwise kombu's filesystem
# transport, which needs no server: the web processes and the worker share message files
# under var/ (one folder for messages, one for the exchange tables), so a task enqueued by
# any process on this machine reaches the worker.
BROKER_DIR = Path(env_str("SETTLE_BROKER_DIR") or VAR_DIR / "broker")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "filesystem://"
# Checked here, so a mistyped scheme is one line at start-up, not kombu's traceback at the
# first task (failover URLs are separated by ';'; `sqla+postgresql://` names kombu's `sqla`).
for _broker in filter(None, map(str.strip, CELERY_BROKER_URL.split(";"))):
    _transport = _broker.partition("://")[0].partition("+")[0]
    if _transport not in TRANSPORT_ALIASES:
        raise ImproperlyConfigured(
            f"CELERY_BROKER_URL is not a broker URL Celery can use: the scheme {_transport!r} "
            "(redis://, rediss://, amqp://, or filesystem:// for the embedded broker)"
        )
if CELERY_BROKER_URL.startswith("filesystem://"):
    for _folder in ("messages", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "messages"),
        "data_folder_out": str(BROKER_DIR / "messages"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
# Acknowledgement, time limits and the visibility timeout: board/celery.py.

# What beat runs, and when (SPEC 8). SETTLE_TEST_BEAT_SECONDS, for tests only, runs every
# job at that short interval instead.
_TEST_BEAT_SECONDS = env_int("SETTLE_TEST_BEAT_SECONDS", 0)


def _every(interval: timedelta | crontab) -> timedelta | crontab:
    return timedelta(seconds=_TEST_BEAT_SECONDS) if _TEST_BEAT_SECONDS else interval


CELERY_BEAT_SCHEDULE = {
    "purge-expired-threads": {
        "task": "maintenance.purge_expired_threads",
        "schedule": _every(timedelta(minutes=10)),
    },
    "purge-deletion-records": {
        "task": "maintenance.purge_deletion_records",
        "schedule": _every(timedelta(hours=1)),
    },
    "purge-attempts": {
        "task": "maintenance.purge_attempts",
        "schedule": _every(timedelta(hours=1)),
    },
    "purge-tombstones": {
        "task": "maintenance.purge_tombstones",
        "schedule": _every(crontab(hour=3, minute=15)),
    },
    "purge-audit-events": {
        "task": "moderation.purge_audit_events",
        "schedule": _every(crontab(hour=3, minute=45)),
    },
    # Outbound deliveries (SPEC 9): due sends and lookups, ended leases, deadlines,
    # endpoints to disable; the retention of settled deliveries; and the endpoints'
    # per-minute tally of sends for the deliveries page (maintenance/deliveries/rates.py).
    "deliveries-sweep": {"task": "maintenance.deliveries_sweep",
                         "schedule": _every(timedelta(minutes=1))},
    "purge-deliveries": {"task": "maintenance.purge_deliveries",
                         "schedule": _every(timedelta(hours=1))},
    "deliveries-roll-up": {"task": "maintenance.deliveries_roll_up",
                           "schedule": _every(timedelta(minutes=1))},
    # The dashboard's per-minute tally (maintenance/activity.py), and what a purge now
    # would remove for the retention page, which never runs a dry run itself (SPEC 8.3).
    "activity-roll-up": {"task": "maintenance.activity_roll_up",
                         "schedule": _every(timedelta(minutes=1))},
    "forecast-purges": {"task": "maintenance.purge_forecast_record",
                        "schedule": _every(timedelta(minutes=15))},
    # An erasure whose worker died goes to a worker again (SPEC 8.4).
    "erasures-resume": {
        "task": "moderation.erasures_resume",
        "schedule": _every(timedelta(minutes=1)),
    },
}

# --- Settle ---------------------------------------------------------------------------
SETTLE_PUBLIC_URL = env_public_url("SETTLE_PUBLIC_URL")
SETTLE_ALLOW_ANONYMOUS = env_bool("SETTLE_ALLOW_ANONYMOUS", True)


def _networks(name: str, default: str = "") -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} holds {item!r}, which is not an address or network"
            ) from None
    return networks


SETTLE_TRUSTED_PROXIES = _networks("SETTLE_TRUSTED_PROXIES")
SETTLE_SOURCE_HOURLY_LIMIT = env_int("SETTLE_SOURCE_HOURLY_LIMIT", 30)
SETTLE_OVERALL_HOURLY_LIMIT = env_int("SETTLE_OVERALL_HOURLY_LIMIT", 600)
SETTLE_ENTRY_RETENTION = env_duration("SETTLE_ENTRY_RETENTION", "30d")
SETTLE_DELETION_RETENTION = env_duration("SETTLE_DELETION_RETENTION", "30d")
SETTLE_TOMBSTONE_RETENTION = env_duration("SETTLE_TOMBSTONE_RETENTION", "400d")
SETTLE_ATTEMPT_RETENTION = env_duration("SETTLE_ATTEMPT_RETENTION", "7d")
# How long a process keeps the console's retention values before reading them again
# (SPEC 8.1: a change is in force everywhere within 60 s).
SETTLE_RETENTION_CACHE_SECONDS = env_int("SETTLE_RETENTION_CACHE_SECONDS", 30, minimum=0)
# Fixed by the contract, not configurable: audit events stay a year; the hourly counters
# are only read for the current hour, so two hours is already generous.
SETTLE_AUDIT_RETENTION = timedelta(days=365)
SETTLE_COUNTER_RETENTION = timedelta(hours=2)
# Rows per purge transaction, and how long one run may go on before leaving the rest to
# the next run.
SETTLE_PURGE_BATCH_SIZE = env_int("SETTLE_PURGE_BATCH_SIZE", 1000, minimum=1)
SETTLE_PURGE_TIME_BUDGET = env_duration("SETTLE_PURGE_TIME_BUDGET", "120s")
SETTLE_MCP_ALLOWED_ORIGINS = env_list("SETTLE_MCP_ALLOWED_ORIGINS")
# Browser origins besides Settle's own that may POST under /api/v1/ (board/serving/origins.py).
SETTLE_API_ALLOWED_ORIGINS = env_list("SETTLE_API_ALLOWED_ORIGINS")

# --- Outbound deliveries (SPEC 9) ---------------------------------------------------------
SETTLE_DELIVERY_TIMEOUT = env_duration("SETTLE_DELIVERY_TIMEOUT", "10s")
SETTLE_DELIVERY_DEADLINE = env_duration("SETTLE_DELIVERY_DEADLINE", "24h")
SETTLE_DELIVERY_SCHEDULE = env_duration_list("SETTLE_DELIVERY_SCHEDULE", "0,5s,5m,30m,2h,5h,10h")
SETTLE_DELIVERY_RETENTION = env_duration("SETTLE_DELIVERY_RETENTION", "30d")
# Erasure (SPEC 8.4): entries a batch (one short transaction), and how long a running
# erasure may go without a committed batch before the resume job hands it to a worker.
SETTLE_ERASE_BATCH_SIZE = env_int("SETTLE_ERASE_BATCH_SIZE", 200, minimum=1)
SETTLE_ERASE_STALE_AFTER = env_duration("SETTLE_ERASE_STALE_AFTER", "120s")
SETTLE_ENDPOINT_DISABLE_AFTER = env_duration("SETTLE_ENDPOINT_DISABLE_AFTER", "5d")
# How long past its timeout a running attempt's lease lasts before the sweep counts it as
# "sent, no answer": room for the worker to write its result after the last byte.
SETTLE_DELIVERY_LEASE_MARGIN = env_duration("SETTLE_DELIVERY_LEASE_MARGIN", "30s")
# A PEM file of extra certificate authorities trusted beside the system's, read by every
# process that sends (workers, `deliveries run`, the web process for Send test).
SETTLE_DELIVERY_CA_FILE = env_str("SETTLE_DELIVERY_CA_FILE", "").strip()
if SETTLE_DELIVERY_CA_FILE and not Path(SETTLE_DELIVERY_CA_FILE).is_file():
    raise ImproperlyConfigured(
        f"SETTLE_DELIVERY_CA_FILE names no readable file: {SETTLE_DELIVERY_CA_FILE}"
    )
if SETTLE_DELIVERY_CA_FILE:
    # Loaded once here, so a file that is not PEM stops every process at start-up instead
    # of failing each send inside the worker.
    try:
        ssl.create_default_context().load_verify_locations(cafile=SETTLE_DELIVERY_CA_FILE)
    except (ssl.SSLError, ValueError, OSError):
        raise ImproperlyConfigured(
            f"SETTLE_DELIVERY_CA_FILE holds no certificate authority in PEM form: "
            f"{SETTLE_DELIVERY_CA_FILE}"
        ) from None
SETTLE_MAX_BODY_BYTES = 256 * 1024
SETTLE_MAX_JSON_DEPTH = 32

# --- https and cookies (SPEC 12) ---------------------------------------------------------
# Whether a request is https is decided by board.serving.middleware.ForwardedProtoMiddleware:
# TLS on the socket, or `X-Forwarded-Proto: https` from a peer in SETTLE_TRUSTED_PROXIES.
# Django's SECURE_PROXY_SSL_HEADER stays unset: it would believe the header from anyone.
if SETTLE_PUBLIC_URL.startswith("https://"):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = 365 * 24 * 3600
    _public_origin = "/".join(SETTLE_PUBLIC_URL.split("/")[:3])
    if _public_origin not in CSRF_TRUSTED_ORIGINS:
        CSRF_TRUSTED_ORIGINS.append(_public_origin)
SESSION_COOKIE_HTTPONLY = True
# The operator's decisions, not Settle's (docs/deploy.md, "https and proxies"): HSTS for every
# subdomain (W005) and the browsers' preload list (W021) bind other sites of the domain;
# redirecting plain http (W008) is the TLS proxy's job, before a request reaches Settle.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W008", "security.W021"]

# --- Metrics (SPEC 12) ---------------------------------------------------------------------

SETTLE_METRICS_ALLOW = _networks("SETTLE_METRICS_ALLOW", "127.0.0.0/8,::1")
SETTLE_METRICS_TOKEN = env_str("SETTLE_METRICS_TOKEN")

# --- Logs: one JSON line per request and per job (board/serving/logs.py) -------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "board.serving.logs.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {
        # Django logs a failed request's exception text, which may quote a database error
        # with the request's content in it (SPEC 11.4); Settle logs error codes itself.
        "django.request": {"level": "CRITICAL"},
        # Django's own handlers (plain text, tracebacks when DEBUG is on) give way to ours.
        "django": {"level": "INFO"},
        # Its own request lines (settle.request) replace the development server's.
        "django.server": {"level": "WARNING", "propagate": True},
        # The refused Host is the client's text; settle.request already logs the 400.
        "django.security.DisallowedHost": {"level": "CRITICAL"},
        # Celery's lines name a task's arguments and result, and quote a failure's text;
        # settle.job writes one line per run instead.
        "celery.app.trace": {"level": "CRITICAL"},
        "celery.worker.strategy": {"level": "WARNING"},
        # Axes writes a line per failure; Settle's audit log already records each one.
        "axes": {"level": "ERROR"},
    },
}
# Keep this logging configuration in the worker too, instead of Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
