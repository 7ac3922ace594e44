"""Who is calling: the idempotency scope and the rate-limit source (SPEC 4).

Both are decided here, on the server, from the token and the peer address; nothing the
client writes in a body chooses them.
"""

import functools
import ipaddress
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from board.models import Principal

ANONYMOUS_SCOPE = "anonymous"


@dataclass(frozen=True)
class Caller:
    principal: Principal | None
    address_source: str
    # The token the caller presented, and when it was last recorded as used: a post that
    # succeeds records its use (at most once a minute) without reading the token again.
    token_id: int | None = None
    token_used_at: datetime | None = None

    @property
    def scope(self) -> str:
        return self.principal.scope if self.principal else ANONYMOUS_SCOPE

    @property
    def source(self) -> str:
        return self.principal.scope if self.principal else self.address_source


def client_address(remote_addr: str, forwarded_for: str | None) -> str:
    """The client's address; `X-Forwarded-For` counts only from a trusted proxy.

    Walking the header from the right, the first address that is not a trusted proxy is
    the client: everything left of it was written by someone we cannot vouch for.
    """
    trusted = settings.SETTLE_TRUSTED_PROXIES
    if not forwarded_for or not _is_trusted(remote_addr, trusted):
        return remote_addr
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, trusted):
            return hop
    return hops[0] if hops else remote_addr


@functools.lru_cache(maxsize=4096)
def address_source(address: str) -> str:
    """The rate-limit source of an anonymous caller; IPv6 is grouped by its /64.
    Cached: parsing the address was 2% of a post's Python time, and callers repeat."""
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return f"ip:{address[:60]}"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped:
            return f"ip:{parsed.ipv4_mapped}"
        return f"ip:{ipaddress.ip_network(f'{parsed}/64', strict=False)}"
    return f"ip:{parsed}"


def _is_trusted(address: str, trusted: list) -> bool:
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    return any(parsed in network for network in trusted)
