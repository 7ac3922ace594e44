"""Password hashers for tests.

`QuickHasher` is PBKDF2-SHA256 at a thousand iterations, the suite's (tests/conftest.py):
a million take a good part of a second of CPU for each user a test makes. Its hashes
carry their iteration count, so a gunicorn on the production hashers reads them too.

`CountingHasher` counts what it is asked to do, so a test can see how many passwords a
server checked. It is MD5's (fast, and it reads the hashes the console tests' users were
made with, tests/moderation/conftest.py), slowed to about a real hasher's time, so
attempts that arrive together are all in their check at once."""

import threading
import time

from django.contrib.auth.hashers import MD5PasswordHasher, PBKDF2PasswordHasher

CHECK_SECONDS = 0.3
_lock = threading.Lock()
_calls = {"verify": 0, "encode": 0}


def calls_reset() -> None:
    with _lock:
        _calls.update(verify=0, encode=0)


def calls() -> dict[str, int]:
    """How many passwords were checked (`verify`) and hashed (`encode`: Django hashes the
    password given for a username that does not exist, to take a check's time)."""
    with _lock:
        return dict(_calls)


class QuickHasher(PBKDF2PasswordHasher):
    iterations = 1_000


class CountingHasher(MD5PasswordHasher):
    def verify(self, password: str, encoded: str) -> bool:
        with _lock:
            _calls["verify"] += 1
        time.sleep(CHECK_SECONDS)
        return super().verify(password, encoded)

    def encode(self, password: str, salt: str) -> str:
        with _lock:
            _calls["encode"] += 1
        time.sleep(CHECK_SECONDS)
        return super().encode(password, salt)
