"""Which browser origins may make a `POST` under /api/v1/ (SPEC 5, `403 forbidden`).

Agents and SDKs send no `Origin`; a browser always sends one on a cross-origin `POST`,
even a `no-cors` one whose answer the page cannot read. Without this rule any web page
could make its visitors' browsers post under their address and quota. A present `Origin`
must be Settle's own (that of SETTLE_PUBLIC_URL, else of the request's validated host
with the scheme Settle decided) or one of SETTLE_API_ALLOWED_ORIGINS. `null` (a sandboxed
frame, a file, a redirect) is never allowed. /mcp allows only SETTLE_MCP_ALLOWED_ORIGINS
(SPEC 6), compared the same way.

Origins are compared as browsers serialize them: lowercase scheme and host, the default
port left out, no path.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_serialized(raw: str) -> str | None:
    """`raw` as a browser serializes an origin, or None when it is not one."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host:
        return None
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def own_origin(request: HttpRequest) -> str | None:
    """Settle's own origin for this request: SETTLE_PUBLIC_URL's, else the validated host's."""
    if settings.SETTLE_PUBLIC_URL:
        return origin_serialized(settings.SETTLE_PUBLIC_URL)
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    return origin_serialized(f"{'https' if request.is_secure() else 'http'}://{host}")


def origins_serialized(listed: list[str]) -> set[str]:
    """An operator's list of origins as browsers serialize them (unparsable ones dropped)."""
    return {serialized for serialized in map(origin_serialized, listed) if serialized is not None}


def mcp_origin_allowed(raw: str) -> bool:
    """Whether a browser page of origin `raw` may call /mcp (SPEC 6): only one listed in
    SETTLE_MCP_ALLOWED_ORIGINS, compared as the API compares its own list."""
    origin = origin_serialized(raw)
    return origin is not None and origin in origins_serialized(settings.SETTLE_MCP_ALLOWED_ORIGINS)


def browser_origin_allowed(request: HttpRequest) -> bool:
    """Whether this request may write: no `Origin`, Settle's own, or an allowed one."""
    # From META, not request.headers: that mapping is built from every header on first
    # use, 1% of a new post's Python time for the one header this asks about.
    raw = request.META.get("HTTP_ORIGIN")
    if raw is None:
        return True
    origin = origin_serialized(raw)  # `null` and anything unparsable serialize to None
    if origin is None:
        return False
    return origin == own_origin(request) or origin in origins_serialized(
        settings.SETTLE_API_ALLOWED_ORIGINS
    )
