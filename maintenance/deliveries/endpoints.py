"""Operator actions on endpoints (SPEC 9): add, set-url, disable, enable, rotate, `Send
test`; the service API the console and the `endpoint` command call (through
moderation.actions, which audits). Actions on deliveries are in `actions`; reads in
`selectors`.

Every refusal raises `DeliveryRefused` with one line an operator can read, and changes
nothing. `endpoint_send_test` makes a request: call it with no transaction open.
"""

import base64
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from board.entries.objects import timestamp
from maintenance.deliveries import webhooks
from maintenance.deliveries.attempts import allowance_covers, host_of, live_secrets
from maintenance.deliveries.models import NAME_LIMIT, REASON_LIMIT, URL_LIMIT, Endpoint
from maintenance.exceptions import DeliveryRefused

# The previous secret keeps signing beside a new one for this long after a rotation.
ROTATION_OVERLAP = timedelta(hours=24)
PLACEHOLDER = "{delivery_id}"


def secret_new() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def endpoint_display_url(endpoint: Endpoint, *, full: bool) -> str:
    """The URL as a viewer may see it: whole for administrators; scheme and host (and a
    port) for everyone else, since webhook URLs often carry secrets in path or query."""
    if full:
        return endpoint.url
    parts = urlsplit(endpoint.url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}"


# --- Endpoints --------------------------------------------------------------------------


def url_checked(url: str, *, allow_private: bool, what: str = "the URL") -> str:
    """The URL as it will be stored and sent (its host IDNA-encoded), or DeliveryRefused
    naming the one problem: SPEC 9's checks when an endpoint is added or changed."""
    if len(url) > URL_LIMIT:
        raise DeliveryRefused(f"{what} is longer than {URL_LIMIT} characters")
    if any(char.isspace() for char in url):
        raise DeliveryRefused(f"{what} must not hold a space")
    if any(ord(char) < 32 or ord(char) == 127 for char in url):
        raise DeliveryRefused(f"{what} must not hold a control character")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise DeliveryRefused(f"{what} is not a valid URL") from None
    if not parts.scheme or not parts.netloc:
        raise DeliveryRefused(f"{what} must be absolute (scheme and host)")
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise DeliveryRefused(f"{what} must be an https URL with a host")
    if parts.scheme == "http" and not allow_private:
        raise DeliveryRefused(
            f"{what} must use https (http only with --allow-private)",
            console=f"{what} must use https (http only with Allow private addresses ticked)",
        )
    if "@" in parts.netloc:
        raise DeliveryRefused(f"{what} must not hold a user name or password")
    if parts.fragment or url.endswith("#"):
        raise DeliveryRefused(f"{what} must not have a #fragment")
    rest = url[len(parts.scheme) + 3 + len(parts.netloc):]
    if not webhooks.sendable(rest):
        raise DeliveryRefused(
            f"{what} must be ASCII outside its host (percent-encode other characters)"
        )
    host = _idna_host(parts.hostname, what)
    netloc = parts.netloc
    if host != parts.hostname:
        port = f":{parts.port}" if parts.port is not None else ""
        netloc = host + port
    elif not netloc.isascii():
        raise DeliveryRefused(f"{what} has a host that is not a valid name")
    return f"{parts.scheme}://{netloc}{rest}"


def _idna_host(host: str, what: str) -> str:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise DeliveryRefused(f"{what} has a host that is not a valid name") from None


def _check_lookup_template(template: str, *, allow_private: bool) -> str:
    if template.count(PLACEHOLDER) != 1:
        raise DeliveryRefused(f"the lookup URL must hold {PLACEHOLDER} exactly once")
    parts = urlsplit(template)
    if PLACEHOLDER not in parts.path and PLACEHOLDER not in parts.query:
        raise DeliveryRefused(f"the lookup URL must hold {PLACEHOLDER} in its path or query")
    checked = url_checked(
        template.replace(PLACEHOLDER, "x"), allow_private=allow_private, what="the lookup URL"
    )
    # The placeholder sits in the path or query, which url_checked leaves as given.
    after = template.split(PLACEHOLDER)[1]
    return checked[: len(checked) - len(after) - 1] + PLACEHOLDER + after


def _endpoint(name: str, *, lock: bool = False) -> Endpoint:
    rows = Endpoint.objects.select_for_update() if lock else Endpoint.objects
    found = rows.filter(name=name).first()
    if found is None:
        raise DeliveryRefused(f"no endpoint named {name!r}")
    return found


def endpoint_add(
    *,
    name: str,
    url: str,
    supports: str = "none",
    lookup_url: str | None = None,
    allow_private: bool = False,
    private_reason: str = "",
) -> tuple[Endpoint, str]:
    """Register an endpoint; returns it and its secret, which is shown this once."""
    if not settings.SETTLE_PUBLIC_URL:
        raise DeliveryRefused(
            "SETTLE_PUBLIC_URL must be set before adding an endpoint (a notice links to its entry)"
        )
    name = (name or "").strip()
    if not 1 <= len(name) <= NAME_LIMIT:
        raise DeliveryRefused(f"the endpoint name must be 1 to {NAME_LIMIT} characters")
    url = (url or "").strip()
    private_reason = (private_reason or "").strip()
    if allow_private and not private_reason:
        raise DeliveryRefused("a reason is required to allow private addresses")
    url = url_checked(url, allow_private=allow_private)
    if supports not in Endpoint.Supports.values:
        raise DeliveryRefused("supports must be dedupe, lookup or none")
    lookup_url = (lookup_url or "").strip()
    if supports == Endpoint.Supports.LOOKUP:
        if not lookup_url:
            raise DeliveryRefused("an endpoint that supports lookup needs a lookup URL")
        lookup_url = _check_lookup_template(lookup_url, allow_private=allow_private)
    elif lookup_url:
        raise DeliveryRefused("a lookup URL is only for an endpoint that supports lookup")
    secret = secret_new()
    now = timezone.now()
    with transaction.atomic():
        if Endpoint.objects.filter(name=name).exists():
            raise DeliveryRefused(f"an endpoint named {name!r} already exists")
        endpoint = Endpoint.objects.create(
            name=name, url=url, secret=secret, supports=supports, lookup_url=lookup_url,
            allow_private=allow_private, private_reason=private_reason if allow_private else "",
            created_at=now, updated_at=now,
        )
    return endpoint, secret


def endpoint_set_url(
    *, name: str, url: str, lookup_url: str | None = None, allow_private: bool = False,
    private_reason: str = "",
) -> tuple[Endpoint, bool]:
    """Point an endpoint at a new URL, checked as at `add`. The private-address allowance
    names one host: moved to another host, it is withdrawn unless given again (with a
    reason). Returns the endpoint and whether the allowance was withdrawn."""
    url = (url or "").strip()
    private_reason = (private_reason or "").strip()
    if allow_private and not private_reason:
        raise DeliveryRefused("a reason is required to allow private addresses")
    now = timezone.now()
    with transaction.atomic():
        endpoint = _endpoint(name, lock=True)
        same_host = host_of(url) == host_of(endpoint.url)
        keeps = endpoint.allow_private and same_host and not allow_private
        allowed = allow_private or keeps
        url = url_checked(url, allow_private=allowed)
        lookup_url = (lookup_url or "").strip()
        if lookup_url:
            if endpoint.supports != Endpoint.Supports.LOOKUP:
                raise DeliveryRefused("a lookup URL is only for an endpoint that supports lookup")
            endpoint.lookup_url = _check_lookup_template(lookup_url, allow_private=allowed)
        withdrawn = endpoint.allow_private and not allowed
        endpoint.url = url
        endpoint.allow_private = allowed
        if allow_private:
            endpoint.private_reason = private_reason
        elif not allowed:
            endpoint.private_reason = ""
        endpoint.updated_at = now
        endpoint.save(update_fields=[
            "url", "lookup_url", "allow_private", "private_reason", "updated_at",
        ])
    return endpoint, withdrawn


def endpoint_disable(*, name: str, reason: str = "") -> Endpoint:
    """Stop sending to an endpoint; its accepted deliveries wait (within their deadline)."""
    now = timezone.now()
    with transaction.atomic():
        endpoint = _endpoint(name, lock=True)
        if not endpoint.enabled:
            raise DeliveryRefused(f"endpoint {name!r} is already disabled")
        endpoint.enabled = False
        reason = (reason or "").strip()[:REASON_LIMIT]
        endpoint.disabled_reason = reason or "disabled by an operator"
        endpoint.disabled_at = endpoint.updated_at = now
        endpoint.save(update_fields=["enabled", "disabled_reason", "disabled_at", "updated_at"])
    return endpoint


def endpoint_enable(*, name: str) -> Endpoint:
    """Send again; waiting deliveries resume within their deadline. The failure clock
    starts over, so an endpoint is not disabled again the minute it comes back."""
    now = timezone.now()
    with transaction.atomic():
        endpoint = _endpoint(name, lock=True)
        if endpoint.enabled:
            raise DeliveryRefused(f"endpoint {name!r} is already enabled")
        endpoint.enabled = True
        endpoint.disabled_reason = ""
        endpoint.disabled_at = None
        endpoint.failing_since = None
        endpoint.updated_at = now
        endpoint.save(update_fields=[
            "enabled", "disabled_reason", "disabled_at", "failing_since", "updated_at",
        ])
    return endpoint


def endpoint_rotate(*, name: str) -> tuple[Endpoint, str]:
    """A new secret; the current one keeps signing beside it for 24 hours. A second
    rotation drops the oldest at once (only two secrets ever sign)."""
    secret = secret_new()
    now = timezone.now()
    with transaction.atomic():
        endpoint = _endpoint(name, lock=True)
        endpoint.previous_secret = endpoint.secret
        endpoint.previous_secret_expires_at = now + ROTATION_OVERLAP
        endpoint.secret = secret
        endpoint.updated_at = now
        endpoint.save(update_fields=[
            "previous_secret", "previous_secret_expires_at", "secret", "updated_at",
        ])
    return endpoint, secret


@dataclass(frozen=True)
class TestResult:
    """What `Send test` saw: the answer to the test notice, and for a lookup endpoint the
    answer to a lookup of an id that does not exist (it should be 404)."""

    status_code: int | None
    error: str
    duration_ms: int
    lookup_status_code: int | None = None
    lookup_error: str = ""

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def lookup_answers_404(self) -> bool | None:
        if self.lookup_status_code is None and not self.lookup_error:
            return None  # not a lookup endpoint
        return self.lookup_status_code == 404


TestResult.__test__ = False  # not a pytest class


def endpoint_send_test(*, name: str) -> TestResult:
    """Send `settle.test` once, signed, outside any delivery; for a lookup endpoint also
    look up a random id. Nothing is stored."""
    no_transaction()
    endpoint = _endpoint(name)
    now = timezone.now()
    message_id = str(uuid.uuid4())
    body = json.dumps(
        {"type": "settle.test", "timestamp": timestamp(now), "data": {}}, separators=(",", ":")
    ).encode()
    secrets_now = live_secrets(endpoint, now)
    timeout = settings.SETTLE_DELIVERY_TIMEOUT.total_seconds()
    answer = webhooks.request(
        method="POST", url=endpoint.url, body=body, timeout=timeout,
        headers=webhooks.signed_headers(message_id=message_id, secrets=secrets_now, body=body),
        allow_private=allowance_covers(endpoint, endpoint.url),
    )
    result = TestResult(
        status_code=answer.status_code, error=answer.error, duration_ms=answer.duration_ms
    )
    if endpoint.supports == Endpoint.Supports.LOOKUP:
        unknown = str(uuid.uuid4())
        headers = webhooks.signed_headers(message_id=unknown, secrets=secrets_now, body=b"")
        headers.pop("Content-Type")
        url = webhooks.lookup_url(endpoint.lookup_url, unknown)
        looked = webhooks.request(
            method="GET", url=url, body=b"", headers=headers, timeout=timeout,
            allow_private=allowance_covers(endpoint, url),
        )
        result = TestResult(
            status_code=result.status_code, error=result.error,
            duration_ms=result.duration_ms, lookup_status_code=looked.status_code,
            lookup_error=looked.error if looked.status_code is None else "",
        )
    return result


def no_transaction() -> None:
    if connection.in_atomic_block:
        raise RuntimeError("this action makes a request: call it with no transaction open")
