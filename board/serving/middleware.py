"""Board's middleware.

`ApiErrorShapeMiddleware` keeps every answer under /api/v1/ in the API's error shape:
Django and ninja answer some refusals before any view runs (a wrong method, a body over
Django's own cap, an unexpected exception); it rewrites those into SPEC 5's shape.

The rest serve production (SPEC 12): the request's log line and duration, Settle's own
decision on https, the probes answered before host validation, which middleware a
request runs (`MachineRoutesMiddleware`), and the page policy on HTML answers only.
"""

import ipaddress
import json
import logging
import ssl
import threading

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.core.exceptions import DisallowedHost, ImproperlyConfigured, MiddlewareNotUsed
from django.http import HttpRequest, HttpResponse

from board.exceptions import (
    BadRequest,
    BoardError,
    Forbidden,
    MethodNotAllowed,
    NotFound,
    error_answer,
)
from board.serving import health, logs, metrics
from board.serving.origins import browser_origin_allowed

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1/"


class _Internal(BoardError):
    status = 500
    code = "internal"
    message = "the server failed to answer; nothing is known about this call"


_BY_STATUS = {400: BadRequest, 404: NotFound, 405: MethodNotAllowed, 500: _Internal}
# Headers about the replaced answer's body (an HTML page's policy among them).
_BODY_HEADERS = {
    "content-type", "content-length", "content-encoding", "etag", "last-modified",
    "content-security-policy", "content-security-policy-report-only",
}


class ApiErrorShapeMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code not in _BY_STATUS:
            return response
        if response.get("Content-Type", "").startswith("application/json") and _has_shape(response):
            return response
        answer = error_answer(_refusal(request, response.status_code))
        shaped = HttpResponse(
            json.dumps(answer.body), status=answer.status, content_type="application/json"
        )
        # The headers the middleware below gave the answer replaced (nosniff, the frame
        # rule, Referrer-Policy, Allow, ...) stay; what described its body goes with it.
        for name, value in response.items():
            if name.lower() not in _BODY_HEADERS:
                shaped[name] = value
        for name, value in answer.headers.items():
            shaped[name] = value
        return shaped

    def process_exception(self, request: HttpRequest, exception: Exception):
        if request.path.startswith(API_PREFIX):
            log.error("unhandled %s on %s", type(exception).__name__, request.path)
        return None


class BrowserOriginMiddleware:
    """SPEC 5.1 step 0: a POST under /api/v1/ from a foreign browser Origin answers 403
    before anything else, so it writes nothing and spends no rate-limit unit; it is
    counted only as `settle_posts_total{outcome="forbidden"}`. Reads take any Origin."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.method != "POST"
            or not request.path.startswith(API_PREFIX)
            or browser_origin_allowed(request)
        ):
            return self.get_response(request)
        answer = error_answer(Forbidden())
        metrics.post_answered(route="api", answer=answer)
        return HttpResponse(
            json.dumps(answer.body), status=answer.status, content_type="application/json"
        )


def _refusal(request: HttpRequest, status: int) -> BoardError:
    if status == 400:
        try:
            request.get_host()
        except DisallowedHost:
            return BadRequest("the Host header names a host this server does not serve "
                              "(ALLOWED_HOSTS)")
        return BadRequest("the request could not be read")
    return _BY_STATUS[status]()


def _has_shape(response: HttpResponse) -> bool:
    try:
        return "error" in json.loads(response.content)
    except (ValueError, TypeError):
        return False


# --- Serving in production (SPEC 12) ------------------------------------------------------

_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


class ObservedRequestMiddleware:
    """One JSON log line and one histogram sample per request, whatever answered it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        state = logs.request_started(metrics.request_route(request.path_info))
        response = self.get_response(request)
        duration = logs.request_finished(
            state,
            # The method is the client's text too: an unknown one is logged as OTHER.
            method=request.method if request.method in _METHODS else "OTHER",
            path=request.path,
            status=response.status_code,
        )
        metrics.request_observed(state["route"], duration)
        return response


def request_scheme(environ: dict) -> str:
    """https when the connection is TLS, or when a trusted proxy says so; else http.

    Under gunicorn the socket itself says whether it is TLS, so gunicorn's own reading of
    X-Forwarded-Proto (its forwarded_allow_ips) is never relied on. Under another server
    (runserver, the test client) that server's `wsgi.url_scheme` is its TLS.
    """
    sock = environ.get("gunicorn.socket")
    if sock is not None:
        if isinstance(sock, ssl.SSLSocket):
            return "https"
    elif environ.get("wsgi.url_scheme") == "https":
        return "https"
    if not peer_is_trusted_proxy(environ.get("REMOTE_ADDR", "")):
        return "http"
    # Proxies that append rather than replace leave the client's own claim on the left;
    # the rightmost value is the one our trusted peer wrote.
    hops = environ.get("HTTP_X_FORWARDED_PROTO", "").split(",")
    return "https" if hops[-1].strip().lower() == "https" else "http"


def peer_is_trusted_proxy(address: str) -> bool:
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False  # a unix socket, or nothing: not a proxy we named
    return any(parsed in network for network in settings.SETTLE_TRUSTED_PROXIES)


class ForwardedProtoMiddleware:
    """Settle's own decision whether a request is https (request.is_secure, request.scheme,
    HSTS, the CSRF checks and absolute URLs all follow it)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.META["wsgi.url_scheme"] = request_scheme(request.META)
        return self.get_response(request)


class ProbeMiddleware:
    """Answers /healthz, /readyz and /metrics before host validation and everything else.

    A load balancer or Prometheus reaches a web process by address, with a Host that
    ALLOWED_HOSTS rightly refuses; these answers never read the Host, build no URL and
    set no cookie, so answering them whatever the Host is safe.
    """

    PROBES = {
        "/healthz": health.healthz,
        "/readyz": health.readyz,
        "/metrics": metrics.metrics_view,
    }

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = self.PROBES.get(request.path_info)
        if probe is None or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        response = probe(request)
        # None: /metrics to a caller who may not read it, answered like an unknown path.
        return self.get_response(request) if response is None else response


# --- Which middleware a request runs --------------------------------------------

API_DOCS = API_PREFIX + "docs"
MCP_PATH = "/mcp"

# The innermost handler, handed from MachineRoutesEnd (built first: Django builds the
# chain from the last entry up) to MachineRoutesMiddleware in the same load.
_chain_end = threading.local()


def machine_route(path: str) -> bool:
    """The agents' routes: everything under /api/v1/ but its HTML docs, and /mcp.

    A bearer token says who calls them. They read no cookie and set none, render no form
    and no flash message, and their views are CSRF-exempt, so sessions, CSRF, login,
    second factor, messages and the login lock have nothing to do there.
    """
    if path.startswith(API_PREFIX):
        return not path.startswith(API_DOCS)
    return path == MCP_PATH


class MachineRoutesMiddleware:
    """The agents' routes skip every middleware between this entry and MachineRoutesEnd;
    pages (console, admin, public, API docs, static) run them all.

    Everything SPEC 5 and 12 ask of an API answer sits above this entry and runs for
    every route: the log line and histogram, the https decision, the probes, the error
    shape, the browser-Origin refusal, Host validation and Content-Length (CommonMiddleware),
    nosniff and the page policy. Profiled on a new post (tests/bench/spy_post.py, --gil),
    the whole chain's own work fell from 16% of the request's Python time to 10%.

    Django still knows every entry of MIDDLEWARE (its checks look for sessions, auth and
    messages there), and still runs their `process_view` hooks: only CSRF has one, and
    the agents' views are CSRF-exempt.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        try:
            self.view = _chain_end.__dict__.pop("get_response")
        except KeyError:
            raise ImproperlyConfigured(
                "MachineRoutesMiddleware needs board.serving.middleware.MachineRoutesEnd "
                "after it in MIDDLEWARE"
            ) from None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if machine_route(request.path_info):
            return self.view(request)
        return self.get_response(request)


class MachineRoutesEnd:
    """Marks where the agents' routes rejoin (last in MIDDLEWARE). It hands the view's
    handler to MachineRoutesMiddleware and then leaves the chain: it costs nothing."""

    def __init__(self, get_response) -> None:
        _chain_end.get_response = get_response
        raise MiddlewareNotUsed


class PagePolicyMiddleware(CSPMiddleware):
    """django-csp's Content-Security-Policy on what a browser renders as a page (HTML,
    SVG): SPEC 7.1's console, admin, public pages, API docs and error pages, on any route.
    A JSON answer loads nothing, so building the policy for it was pure cost (3% of a new
    post's Python time)."""

    PAGE_TYPES = ("text/html", "application/xhtml+xml", "image/svg+xml")

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if not response.get("Content-Type", "").startswith(self.PAGE_TYPES):
            return response
        return super().process_response(request, response)
