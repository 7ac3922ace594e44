"""Settings of the receipt peer: the plain peer's (tests/bench/plain/settings.py), with
SQLite's write transactions immediate, as Django offers, so concurrent posts queue for the
writer instead of failing on a lock upgrade."""

import os

import dj_database_url

SECRET_KEY = os.environ.get("SECRET_KEY") or "bench-receipt-peer-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["tests.bench.receipt_peer.apps.ReceiptPeerConfig"]
MIDDLEWARE = []
ROOT_URLCONF = "tests.bench.receipt_peer.urls"
USE_TZ = True

DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=600)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 5,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
