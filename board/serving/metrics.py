"""Metrics in the Prometheus text format at `/metrics` (SPEC 12).

Design note
-----------
Two kinds of series, counted in two ways:

* **What this server did** (`settle_posts_total`, `settle_request_duration_seconds`) is
  counted in the process that did it, with prometheus-client in multiprocess mode:
  each gunicorn worker writes its counts to a file in PROMETHEUS_MULTIPROC_DIR
  (deploy/gunicorn.conf.py makes one folder per server; started without it, wsgi.py
  makes one per server master, board/serving/metrics_folder.py) and a scrape adds up every
  worker's file, so counts hold whichever worker answers the scrape. Where the app is not
  loaded through wsgi.py (manage.py, the test process) the counts live in the one process.
  Each web server reports its own; Prometheus sums them across hosts.
* **What the database holds** (maintenance runs, deliveries) is read at scrape time
  from the database by sources that the apps to the right of board register with
  `@source` in their own `metrics` module (found once, like admin modules), so board
  never imports them. Every web server reports the same values: take `max` across
  hosts, not `sum`. A source that fails is left out of that scrape, logged by class.

Posts are counted in one place, the shared answer of both routes
(`board.http.answers.entry_post_answer`, decorated with `counted_post`), so HTTP and MCP cannot
drift apart. Access: client addresses in SETTLE_METRICS_ALLOW (after trusted proxies, as
SPEC 4 reads them) or `Authorization: Bearer <SETTLE_METRICS_TOKEN>`; to anyone else
`/metrics` does not exist (the ordinary 404).
"""

import functools
import hmac
import ipaddress
import logging
import os
import threading
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

# prometheus-client writes each count to a file in this folder from the first one on; a
# folder that is named but missing would fail every request, so make it.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

from prometheus_client import (  # noqa: E402 (after the folder exists)
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics_core import Metric  # noqa: E402

from board.exceptions import Answer
from board.serving import logs

log = logging.getLogger(__name__)

POST_OUTCOMES = (
    "created", "replayed", "conflict", "in_progress", "deleted", "expired", "rate_limited",
    "writes_disabled", "parent_unavailable", "invalid", "unauthorized", "forbidden",
    "unavailable",
)
# An error answer's code to its outcome; the codes are SPEC 5's.
_OUTCOME_BY_CODE = {
    "conflict": "conflict",
    "in_progress": "in_progress",
    "deleted": "deleted",
    "expired": "expired",
    "rate_limited": "rate_limited",
    "writes_disabled": "writes_disabled",
    "parent_unavailable": "parent_unavailable",
    "bad_request": "invalid",
    "invalid_request": "invalid",
    "unauthorized": "unauthorized",
    "forbidden": "forbidden",
    "unavailable": "unavailable",
}
ROUTES = ("api", "mcp", "console", "public", "health", "other")

POSTS = Counter(
    "settle_posts", "Posts answered, by route (api, mcp) and outcome.", ["route", "outcome"]
)
REQUEST_DURATION = Histogram(
    "settle_request_duration_seconds",
    "Time from the request reaching Settle to its answer, by route.",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


# --- Counting ------------------------------------------------------------------------------


def request_route(path: str) -> str:
    """The `route` label of a request path: a handful of values, never the path itself."""
    if path.startswith("/api/"):
        return "api"
    if path == "/mcp" or path.startswith("/mcp/"):
        return "mcp"
    if path.startswith(("/console/", "/admin/")) or path in ("/console", "/admin"):
        return "console"
    if path in ("/healthz", "/readyz", "/metrics"):
        return "health"
    if path == "/" or path.startswith(("/threads", "/static/", "/favicon")):
        return "public"
    return "other"


# Labelled series, made once each: `labels()` checks its arguments and takes a lock on
# every call, a noticeable share of a request that takes a millisecond.
_durations: dict[str, Histogram] = {}
_posts: dict[tuple[str, str], Counter] = {}


def request_observed(route: str, seconds: float) -> None:
    series = _durations.get(route)
    if series is None:
        series = _durations[route] = REQUEST_DURATION.labels(route=route)
    series.observe(seconds)


def post_outcome(answer: Answer) -> str:
    if answer.status == 201:
        return "created"
    if answer.status == 200:
        return "replayed"
    error = answer.body.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if code in _OUTCOME_BY_CODE:
        return _OUTCOME_BY_CODE[code]
    return "unavailable" if answer.status >= 500 else "invalid"


def post_answered(*, route: str, answer: Answer, request_id: str | None = None) -> None:
    """Count one answered post, and tell the request's log line its outcome."""
    outcome = post_outcome(answer)
    series = _posts.get((route, outcome))
    if series is None:
        series = _posts[route, outcome] = POSTS.labels(route=route, outcome=outcome)
    series.inc()
    logs.request_post_answered(
        outcome=outcome, request_id=logs.safe_request_id(answer.body.get("request_id"))
        or request_id,
    )


def counted_post(function: Callable[..., Answer]) -> Callable[..., Answer]:
    """Wrap the shared post answer (`entry_post_answer`) so every answer is counted."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs) -> Answer:
        answer = function(*args, **kwargs)
        request_id = None
        if answer.status >= 400:  # a success carries its own request_id
            request_id = _asked_request_id(kwargs.get("fields"))
        post_answered(route=kwargs.get("route", "api"), answer=answer, request_id=request_id)
        return answer

    return wrapper


def _asked_request_id(fields: object) -> str | None:
    """The request_id a refused post asked for, for its log line: only a valid UUID.
    `fields` is the post as its door read it (board.entries.fields): checked fields hold
    a UUID, a refused shape what was sent."""
    asked = getattr(fields, "request_id", None)
    return logs.safe_request_id(asked if asked is None or isinstance(asked, str) else str(asked))


# --- Sources read at scrape time -----------------------------------------------------------

_sources: list[Callable[[], Iterable[Metric]]] = []
_discovered = False
_discover_lock = threading.Lock()


def source(function: Callable[[], Iterable[Metric]]) -> Callable[[], Iterable[Metric]]:
    """Register a function that yields metric families read at each scrape."""
    if function not in _sources:
        _sources.append(function)
    return function


def _discover_sources() -> None:
    global _discovered
    with _discover_lock:
        if not _discovered:
            from django.utils.module_loading import autodiscover_modules

            autodiscover_modules("metrics")
            _discovered = True


class _Scrape:
    """What one scrape exposes: the processes' counts plus the database's sources."""

    def collect(self) -> Iterable[Metric]:
        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if folder:
            from prometheus_client.multiprocess import MultiProcessCollector

            yield from MultiProcessCollector(None, path=folder).collect()
        else:
            yield from REGISTRY.collect()
        for read in _sources:
            try:
                yield from list(read())
            except Exception as error:  # a database down: leave those series out
                log.warning("metrics source %s failed with %s", read.__name__,
                            type(error).__name__)


def exposition() -> bytes:
    _discover_sources()
    return generate_latest(_Scrape())


# --- Access --------------------------------------------------------------------------------


def metrics_allowed(request: HttpRequest) -> bool:
    token = settings.SETTLE_METRICS_TOKEN
    scheme, _, offered = request.headers.get("Authorization", "").strip().partition(" ")
    if token and scheme.lower() == "bearer" and hmac.compare_digest(
        offered.strip().encode(), token.encode()
    ):
        return True
    from board.posting.callers import client_address

    address = client_address(request)
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in settings.SETTLE_METRICS_ALLOW)


def metrics_view(request: HttpRequest) -> HttpResponse | None:
    """The scrape, or None for a caller who may not see it (answered like any unknown path)."""
    if not metrics_allowed(request):
        return None
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
