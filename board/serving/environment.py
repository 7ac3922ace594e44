"""Reading configuration from the environment, failing loudly.

Every reader raises ImproperlyConfigured naming the variable, so a typo in a
deployment stops start-up instead of running with a silent default.
"""

import os
import re
import sys
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

# ASCII digits only (`\d` also reads other scripts' digits: "١٢h"), and at most 18 of
# them, so int() never reads a number of thousands of digits (past 4,300 a ValueError).
_DURATION = re.compile(r"([0-9]{1,18})([smhd]?)")
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
    """Whole seconds or a number with s, m, h or d; None for anything else."""
    match = _DURATION.fullmatch(raw.strip())
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


_DATABASE_ENGINES = ("django.db.backends.sqlite3", "django.db.backends.postgresql")


def env_database(name: str, default: str, **options) -> dict:
    """A Django DATABASES entry from a URL: SQLite or PostgreSQL, the two Settle runs on."""
    return env_database_url(os.environ.get(name) or default, name, **options)


def env_database_url(raw: str, name: str, **options) -> dict:
    """A Django DATABASES entry from the URL `raw`, read from the variable `name`."""
    # Only the scheme is ever repeated back: the rest may hold a password.
    scheme = raw.split("://")[0] if "://" in raw else None
    config = None
    if scheme is None:
        reason = "it has no scheme"
    else:
        try:
            config = _parse_database_url(raw, options)
        except ValueError as error:
            reason = (f"the scheme {scheme!r} is unknown" if "Scheme" in str(error)
                      else "it cannot be read (a port that is not a number?)")
    if config is not None and config.get("ENGINE") not in _DATABASE_ENGINES:
        reason, config = f"Settle runs on PostgreSQL and SQLite, not {scheme!r}", None
    if config is None:
        raise ImproperlyConfigured(
            f"{name} is not a database URL Settle can use: {reason}; "
            "give postgres://user:password@host:5432/name or sqlite:///path/to/file"
        )
    return config


def env_replicas(name: str, primary: dict, cache_url: str) -> dict[str, dict]:
    """The read replicas named in `name` as DATABASES entries (`replica_0`, ...) with the
    primary's options; refused in one line without a PostgreSQL primary or a Redis cache
    every web process shares (board/serving/replicas.py keeps writers' positions there)."""
    urls = env_list(name)
    if not urls:
        return {}
    if primary["ENGINE"] == "django.db.backends.sqlite3":
        raise ImproperlyConfigured(f"{name} needs PostgreSQL: DATABASE_URL names a SQLite file")
    if not cache_url.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(
            f"{name} needs SETTLE_CACHE_URL, the Redis every web process shares "
            "(redis://host:6379/N), to keep each writer's position"
        )
    replicas = {}
    for index, url in enumerate(urls):
        replica = env_database_url(url, name, conn_max_age=primary["CONN_MAX_AGE"],
                                   conn_health_checks=primary["CONN_HEALTH_CHECKS"])
        if replica["ENGINE"] != "django.db.backends.postgresql":
            raise ImproperlyConfigured(f"{name} must name PostgreSQL databases")
        replicas[f"replica_{index}"] = {
            **replica,
            "ENGINE": primary["ENGINE"],
            "OPTIONS": {**primary["OPTIONS"], **replica.get("OPTIONS", {})},
            "DISABLE_SERVER_SIDE_CURSORS": True,
            "TEST": {"MIRROR": "default"},
        }
    return replicas


def _parse_database_url(raw: str, options: dict) -> dict:
    """dj-database-url's reading, plus libpq's multi-host form (SPEC 12.1's failover:
    `postgres://h1:5432,h2:5433/settle?target_session_attrs=read-write`), which it
    refuses: the host list is set aside, the rest parsed as usual, and the hosts and
    ports handed to libpq as its comma-separated `host` and `port` (an empty port is
    libpq's default)."""
    import dj_database_url

    match = re.fullmatch(r"(postgres(?:ql)?|pgsql)://([^/?#@]*@)?([^/?#@]*,[^/?#@]*)(.*)", raw)
    if match is None:
        return dj_database_url.parse(raw, **options)
    scheme, user, hosts, rest = match.groups()
    config = dj_database_url.parse(f"{scheme}://{user or ''}placeholder{rest}", **options)
    names, ports = [], []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not name:  # "h1" with no port
            name, port = port, ""
        if not name or (port and not port.isdigit()):
            raise ValueError("a host or port in the list cannot be read")
        names.append(name.strip("[]"))
        ports.append(port)
    config["HOST"] = ",".join(names)
    config["PORT"] = ",".join(ports) if any(ports) else ""
    return config


def env_public_url(name: str) -> str:
    """An http(s) origin with a host, or empty; without the trailing slash."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImproperlyConfigured(
            f"{name} must be an http:// or https:// URL like https://settle.example.com, "
            f"not {raw!r}"
        )
    return raw.rstrip("/")


def env_duration_list(name: str, default: str) -> list[timedelta]:
    """A non-empty comma-separated list of durations where `0` is allowed (a schedule)."""
    raw = os.environ.get(name, default)
    items = [parse_duration(item) for item in raw.split(",")]
    if not raw.strip() or any(item is None for item in items):
        raise ImproperlyConfigured(
            f"{name} must be a comma-separated list of durations like 0,5s,5m, not {raw!r}"
        )
    return items
