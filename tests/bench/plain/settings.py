"""Settings of the plain peer. Like Settle's where a difference would distort the
comparison (persistent connections; on SQLite WAL, synchronous=NORMAL and a 5 s busy
timeout), and nothing else: no middleware, no auth, no sessions, no templates."""

import os

import dj_database_url

SECRET_KEY = os.environ.get("SECRET_KEY") or "bench-plain-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["tests.bench.plain.apps.PlainConfig"]
MIDDLEWARE = []
ROOT_URLCONF = "tests.bench.plain.urls"
USE_TZ = True

DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=600)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 5,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
