"""Settle's settings: everything a deployment changes comes from the environment (SPEC 3)."""

import ipaddress
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from board.environment import (
    env_bool,
    env_duration,
    env_duration_list,
    env_int,
    env_list,
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

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
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
    "ninja",
    "receipts",
    "board",
    "maintenance",
    "moderation",
]

MIDDLEWARE = [
    # First, so it also reshapes what the other middleware answer under /api/v1/.
    "board.middleware.ApiErrorShapeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
# SQLite runs every transaction as BEGIN IMMEDIATE: the write lock is taken up front, so
# the claim, the tombstone check and the write serialize and a busy database fails fast
# (after the timeout) instead of deadlocking half-way through.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'settle.sqlite3'}"
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 5,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_settle.sqlite3")}
else:
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 5)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "/console/login/"

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
# A purge that dies half-way is simply run again: each batch commits on its own.
CELERY_TASK_ACKS_LATE = False

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
    # endpoints to disable; and the retention of settled deliveries.
    "deliveries-sweep": {
        "task": "maintenance.deliveries_sweep",
        "schedule": _every(timedelta(minutes=1)),
    },
    "purge-deliveries": {
        "task": "maintenance.purge_deliveries",
        "schedule": _every(timedelta(hours=1)),
    },
}

# --- Settle ---------------------------------------------------------------------------
SETTLE_PUBLIC_URL = env_str("SETTLE_PUBLIC_URL").rstrip("/")
SETTLE_ALLOW_ANONYMOUS = env_bool("SETTLE_ALLOW_ANONYMOUS", True)


def _trusted_proxies() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks = []
    for item in env_list("SETTLE_TRUSTED_PROXIES"):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"SETTLE_TRUSTED_PROXIES holds {item!r}, which is not an address or network"
            ) from None
    return networks


SETTLE_TRUSTED_PROXIES = _trusted_proxies()
SETTLE_SOURCE_HOURLY_LIMIT = env_int("SETTLE_SOURCE_HOURLY_LIMIT", 30)
SETTLE_OVERALL_HOURLY_LIMIT = env_int("SETTLE_OVERALL_HOURLY_LIMIT", 600)
SETTLE_ENTRY_RETENTION = env_duration("SETTLE_ENTRY_RETENTION", "30d")
SETTLE_DELETION_RETENTION = env_duration("SETTLE_DELETION_RETENTION", "30d")
SETTLE_TOMBSTONE_RETENTION = env_duration("SETTLE_TOMBSTONE_RETENTION", "400d")
SETTLE_ATTEMPT_RETENTION = env_duration("SETTLE_ATTEMPT_RETENTION", "7d")
# Fixed by the contract, not configurable: audit events stay a year; the hourly counters
# are only read for the current hour, so two hours is already generous.
SETTLE_AUDIT_RETENTION = timedelta(days=365)
SETTLE_COUNTER_RETENTION = timedelta(hours=2)
# Rows per purge transaction, and how long one run may go on before leaving the rest to
# the next run.
SETTLE_PURGE_BATCH_SIZE = env_int("SETTLE_PURGE_BATCH_SIZE", 1000, minimum=1)
SETTLE_PURGE_TIME_BUDGET = env_duration("SETTLE_PURGE_TIME_BUDGET", "120s")
SETTLE_MCP_ALLOWED_ORIGINS = env_list("SETTLE_MCP_ALLOWED_ORIGINS")

# --- Outbound deliveries (SPEC 9) ---------------------------------------------------------
SETTLE_DELIVERY_TIMEOUT = env_duration("SETTLE_DELIVERY_TIMEOUT", "10s")
SETTLE_DELIVERY_DEADLINE = env_duration("SETTLE_DELIVERY_DEADLINE", "24h")
SETTLE_DELIVERY_SCHEDULE = env_duration_list("SETTLE_DELIVERY_SCHEDULE", "0,5s,5m,30m,2h,5h,10h")
SETTLE_DELIVERY_RETENTION = env_duration("SETTLE_DELIVERY_RETENTION", "30d")
SETTLE_ENDPOINT_DISABLE_AFTER = env_duration("SETTLE_ENDPOINT_DISABLE_AFTER", "5d")
# How long past its timeout a running attempt's lease lasts before the sweep counts it as
# "sent, no answer": room for the worker to write its result after the last byte.
SETTLE_DELIVERY_LEASE_MARGIN = env_duration("SETTLE_DELIVERY_LEASE_MARGIN", "30s")

# How long a request waits for another transaction's claim on the same identity (SPEC 5.1).
SETTLE_CLAIM_WAIT_SECONDS = 5
SETTLE_MAX_BODY_BYTES = 256 * 1024
SETTLE_MAX_JSON_DEPTH = 32

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "INFO"},
    # Django logs a failed request's exception text, which may quote a database error
    # with the request's content in it (SPEC 11.4); Settle logs error codes itself.
    "loggers": {"django.request": {"level": "CRITICAL"}},
}
