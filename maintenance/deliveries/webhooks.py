"""One webhook request: signed, to a vetted address, inside one time budget.

Design note
-----------
Why not `requests` (or `requests-hardened`)? Three things SPEC 9 asks for are hard to get
from a pooled client: every resolved address vetted (requests-hardened vets the first
one and its single switch lifts the whole filter), the connection made to *the address
that was vetted* (resolving again to connect opens the DNS-rebinding window), and one
budget from name resolution to the last byte (urllib3's timeouts are per socket call). So
this module is a small vetted connection on the standard library:

1. **Resolve once**, with `getaddrinfo` in a helper thread so resolution is bounded by
   the same budget (the C resolver cannot be interrupted; a stuck lookup is abandoned).
2. **Vet every address** (`address_is_public`); one private answer refuses the attempt,
   before any connection. `allow_private` (per endpoint, audited) skips this step only.
3. **Connect to the vetted address itself**, never the name again; TLS verifies the
   certificate against the URL's host name (SNI), and `Host` is the URL's host.
4. **A watchdog** shuts the socket down when the budget ends, so a server dripping bytes
   cannot stretch an attempt; every socket call also times out at what is left.
   The authorities are the system's plus SETTLE_DELIVERY_CA_FILE's (`tls_context`).
5. **No redirects, proxies or `.netrc`**: `http.client` has none of them. One request,
   one answer: there is no retry here (the only retry layer is the delivery's state
   machine, `models.Delivery`).
6. **Evidence, not content**: the status code, `Retry-After`, and an error *class*; the
   body is read up to 4 KiB (so the server is not reset mid-answer) and discarded.

`request_left` says whether the request may have reached the server: False only when the
attempt stopped before any byte was written (address rule, DNS, connect, TLS). Anything
after counts as left, because an error then cannot tell.
"""

import functools
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from standardwebhooks.webhooks import Webhook

BODY_READ_LIMIT = 4096

# Beyond what `ipaddress` calls non-global: the ranges SPEC 9 names, written out so the
# rule does not change with the Python version.
BLOCKED_NETWORKS = [
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "::/96", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48",
        "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10",
        "fec0::/10", "ff00::/8",
        # IPv4-translated (RFC 2765), documentation (RFC 9637), SRv6 SIDs (RFC 9602).
        "::ffff:0:0:0/96", "3fff::/20", "5f00::/16",
    )
]


def address_is_public(address: str) -> bool:
    """Whether one resolved address may be contacted without `allow_private`."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if ip.version == 6:
        # An IPv4 address in IPv6 clothing is judged as the IPv4 address it carries.
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None and not address_is_public(str(embedded)):
            return False
    if any(ip in network for network in BLOCKED_NETWORKS if network.version == ip.version):
        return False
    return ip.is_global and not ip.is_multicast


@dataclass(frozen=True)
class ReceiverAnswer:
    """What one request came to."""

    status_code: int | None
    # An error class, or "" when an answer came: address_refused, dns_error, dns_timeout,
    # connect_error, connect_timeout, tls_untrusted, tls_name_mismatch,
    # tls_handshake, bad_url, timeout, connection_reset,
    # connection_closed, bad_response, send_error.
    error: str
    request_left: bool
    duration_ms: int
    retry_after: float | None = None


class _Refused(Exception):
    def __init__(self, error: str, *, left: bool) -> None:
        self.error, self.left = error, left


Resolver = Callable[..., list]


def request(
    *,
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    timeout: float,
    allow_private: bool,
    resolve: Resolver = socket.getaddrinfo,
) -> ReceiverAnswer:
    """Make one request within `timeout` seconds, from resolution to the last byte read.

    `resolve` stands in for DNS in tests (a resolver that changes its answer between
    calls shows the connection goes to the address that was vetted).
    """
    started = time.monotonic()
    deadline = started + max(timeout, 0.0)
    status, retry_after, error, left = None, None, "", False
    try:
        status, retry_after = _exchange(
            method=method, url=url, headers=headers, body=body, deadline=deadline,
            allow_private=allow_private, resolve=resolve,
        )
    except _Refused as refused:
        error, left = refused.error, refused.left
    except Exception:
        # Nothing foreseen: whether the request left cannot be told, so it counts as left.
        error, left = "send_error", True
    duration_ms = int((time.monotonic() - started) * 1000)
    return ReceiverAnswer(
        status_code=status, error=error, request_left=left if status is None else True,
        duration_ms=duration_ms, retry_after=retry_after,
    )


def sendable(text: str) -> bool:
    """Whether a URL part can go on the request line as it is: printable ASCII, no space
    (no control character, DEL included)."""
    return all(33 <= ord(char) <= 126 for char in text)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError()
    return left


def _exchange(
    *, method, url, headers, body, deadline, allow_private, resolve
) -> tuple[int, float | None]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
        raise _Refused("bad_url", left=False)
    host = parts.hostname
    if not sendable(host):
        raise _Refused("bad_url", left=False)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise _Refused("bad_url", left=False) from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not sendable(target):
        # http.client would refuse it (or raise) while writing: nothing has left yet.
        raise _Refused("bad_url", left=False)

    addresses = _resolve(host, port, deadline, resolve)
    if not allow_private and not all(address_is_public(sockaddr[0]) for *_, sockaddr in addresses):
        raise _Refused("address_refused", left=False)
    sock = _connect(addresses, deadline)
    fired = threading.Event()
    watchdog = threading.Timer(max(deadline - time.monotonic(), 0.0), _shut, [sock, fired])
    watchdog.daemon = True
    watchdog.start()
    try:
        if parts.scheme == "https":
            sock = _tls(sock, host, deadline)
            watchdog.args = [sock, fired]
        return _send(sock, host, port, method, target, headers, body, deadline, fired)
    finally:
        watchdog.cancel()
        sock.close()


def _resolve(host: str, port: int, deadline: float, resolve: Resolver) -> list:
    found: dict[str, object] = {}

    def lookup() -> None:
        try:
            found["addresses"] = resolve(host, port, type=socket.SOCK_STREAM)
        except OSError:
            found["error"] = True

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0.0))
    if worker.is_alive():
        raise _Refused("dns_timeout", left=False)
    if "error" in found or not found.get("addresses"):
        raise _Refused("dns_error", left=False)
    return found["addresses"]


def _connect(addresses: list, deadline: float) -> socket.socket:
    error = "connect_error"
    for family, kind, proto, _, sockaddr in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_remaining(deadline))
            sock.connect(sockaddr)
            return sock
        except TimeoutError:
            sock.close()
            error = "connect_timeout"
            if time.monotonic() >= deadline:
                break
        except OSError:
            sock.close()
    raise _Refused(error, left=False)


@functools.cache
def tls_context(ca_file: str = "") -> ssl.SSLContext:
    """The system's authorities, plus those in `ca_file` (SETTLE_DELIVERY_CA_FILE): built
    once per process and file, since loading a store costs milliseconds per attempt."""
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


# OpenSSL's verify results that mean "the name is not the one the certificate names".
_NAME_MISMATCH = {62, 63, 64}  # X509_V_ERR_HOSTNAME_MISMATCH, _EMAIL_, _IP_ADDRESS_


def _tls_error(error: Exception) -> str:
    """tls_untrusted (unknown, self-signed or expired chain), tls_name_mismatch, or
    tls_handshake (anything else)."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return "tls_name_mismatch" if error.verify_code in _NAME_MISMATCH else "tls_untrusted"
    return "tls_handshake"


def _tls(sock: socket.socket, host: str, deadline: float) -> ssl.SSLSocket:
    try:
        # Inside: a CA file that stopped loading since start-up fails before any byte left.
        context = tls_context(_ca_file())
        sock.settimeout(_remaining(deadline))
        return context.wrap_socket(sock, server_hostname=host)
    except TimeoutError:
        raise _Refused("connect_timeout", left=False) from None
    except (ssl.SSLError, OSError) as error:
        raise _Refused(_tls_error(error), left=False) from None


def _ca_file() -> str:
    from django.conf import settings

    return getattr(settings, "SETTLE_DELIVERY_CA_FILE", "") or ""


def _shut(sock: socket.socket, fired: threading.Event) -> None:
    # Unblocks a read in the sending thread at once; close() alone would not.
    fired.set()
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _send(
    sock, host, port, method, target, headers, body, deadline, fired
) -> tuple[int, float | None]:
    connection = http.client.HTTPConnection(host, port)
    connection.sock = sock  # connect() is skipped: the vetted socket is used as it is
    try:
        sock.settimeout(_remaining(deadline))
    except TimeoutError:
        raise _Refused("timeout", left=False) from None
    try:
        connection.request(method, target, body=body, headers=headers)
        sock.settimeout(_remaining(deadline))
        response = connection.getresponse()
    except (OSError, http.client.HTTPException) as error:
        raise _Refused(_error_class(error, deadline), left=True) from None
    if fired.is_set():
        # The watchdog cut the answer short: http.client takes a header block ended by
        # the shutdown for a whole one, so a status line alone is no answer.
        raise _Refused("timeout", left=True)
    try:
        sock.settimeout(_remaining(deadline))
        response.read(BODY_READ_LIMIT)  # discarded: evidence never keeps a body
    except (OSError, http.client.HTTPException):
        pass  # the status already answered; a slow or broken body changes nothing
    return response.status, retry_after_seconds(response.getheader("Retry-After"))


def _error_class(error: Exception, deadline: float) -> str:
    # The watchdog's shutdown surfaces as a reset or a closed connection: past the
    # deadline it is a timeout, whatever its shape.
    if isinstance(error, TimeoutError) or time.monotonic() >= deadline:
        return "timeout"
    if isinstance(error, ConnectionResetError):
        return "connection_reset"
    if isinstance(error, (http.client.RemoteDisconnected, BrokenPipeError)):
        return "connection_closed"
    if isinstance(error, http.client.HTTPException):
        return "bad_response"
    return "send_error"


# A Retry-After longer than this (a year) is no schedule anyone means: it is capped, so
# arithmetic on it can never overflow; it reaches past any deadline all the same.
RETRY_AFTER_CAP = 366 * 24 * 3600.0
_DELTA_SECONDS = re.compile(r"[0-9]{1,32}")


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a `Retry-After` (delta-seconds or an HTTP date), read as the
    untrusted input it is: never raises; None when absent, negative, non-ASCII or garbage;
    capped at RETRY_AFTER_CAP. A date in the past means "now" (0)."""
    if not value or not isinstance(value, str):
        return None
    value = value.strip(" \t")
    if not value or not value.isascii():
        return None
    if _DELTA_SECONDS.fullmatch(value):  # ASCII digits only: str.isdigit accepts "²"
        return min(float(int(value)), RETRY_AFTER_CAP)
    if len(value) > 64:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment is None or moment.tzinfo is None:
        return None
    try:
        seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    except OverflowError:
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


# --- Signing ----------------------------------------------------------------------------


def signed_headers(*, message_id: str, secrets: list[str], body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers for `body`, one signature per live secret, plus the
    plain `Idempotency-Key`. Sign the exact bytes that are sent."""
    moment = datetime.fromtimestamp(int(time.time()), tz=UTC)
    text = body.decode("utf-8")
    signature = " ".join(
        Webhook(secret).sign(msg_id=message_id, timestamp=moment, data=text)
        for secret in secrets
    )
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signature,
        "Idempotency-Key": message_id,
        "Content-Type": "application/json",
        "User-Agent": "Settle-Webhooks/1",
    }


def lookup_url(template: str, delivery_id: str) -> str:
    """The lookup URL for one delivery: `{delivery_id}` replaced literally."""
    return template.replace("{delivery_id}", delivery_id)
