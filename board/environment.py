"""Reading configuration from the environment, failing loudly.

Every reader raises ImproperlyConfigured naming the variable, so a typo in a
deployment stops start-up instead of running with a silent default.
"""

import os
import re
import sys
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

_DURATION = re.compile(r"^(\d+)([smhd]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def parse_duration(raw: str) -> timedelta | None:
    match = _DURATION.match(raw.strip())
    if not match:
        return None
    try:
        return timedelta(seconds=int(match[1]) * _UNIT_SECONDS[match[2]])
    except OverflowError:
        return None


def env_duration(name: str, default: str) -> timedelta:
    raw = os.environ.get(name, default)
    duration = parse_duration(raw)
    if duration is None or duration <= timedelta(0):
        raise ImproperlyConfigured(
            f"{name} must be whole seconds or a number with s, m, h or d (like 90s or 30d), "
            f"not {raw!r}"
        )
    return duration


def env_list(name: str, default: str = "") -> list[str]:
    raw = os.environ.get(name, default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def settings_or_exit(*, exit_code: int = 1) -> None:
    """Read the settings now; a configuration error ends the process in one line.

    Called by each entry point (manage.py, wsgi.py, the Celery app) before anything else
    touches the settings, so an operator sees `settle: SECRET_KEY must be set ...` and not
    a forty-line traceback ending in it.
    """
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 (the read is the point: it loads the module)
    except ImproperlyConfigured as error:
        print(f"settle: {error}", file=sys.stderr)
        sys.exit(exit_code)
    except ValueError as error:
        # dj-database-url's errors (an unknown scheme, a port that is not a number) do not
        # name the variable; say which one it is when it is the one that fails.
        if not _database_url_fails():
            raise
        print(f"settle: DATABASE_URL is not a database URL Settle can use: {error}",
              file=sys.stderr)
        sys.exit(exit_code)


def _database_url_fails() -> bool:
    import dj_database_url

    raw = os.environ.get("DATABASE_URL")
    if not raw:
        return False
    try:
        dj_database_url.parse(raw)
    except ValueError:
        return True
    return False


def env_duration_list(name: str, default: str) -> list[timedelta]:
    """A non-empty comma-separated list of durations where `0` is allowed (a schedule)."""
    raw = os.environ.get(name, default)
    items = [parse_duration(item) for item in raw.split(",")]
    if not raw.strip() or any(item is None for item in items):
        raise ImproperlyConfigured(
            f"{name} must be a comma-separated list of durations like 0,5s,5m, not {raw!r}"
        )
    return items
