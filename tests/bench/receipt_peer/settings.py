"""Settings of the receipt peer: the plain peer's (tests/bench/plain/settings.py), with its
own app, and SQLite's write transactions immediate, as Django offers, so concurrent posts
queue for the writer instead of failing on a lock upgrade."""

from tests.bench.plain.settings import *  # noqa: F403 (the same settings, but for these)
from tests.bench.plain.settings import DATABASES

INSTALLED_APPS = ["tests.bench.receipt_peer.apps.ReceiptPeerConfig"]
ROOT_URLCONF = "tests.bench.receipt_peer.urls"

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
