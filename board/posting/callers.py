"""Who is calling: the idempotency scope and the rate-limit source (SPEC 4), and a
post's admission (SPEC 5.1 step 1, counted as step 2 asks).

Both are decided here, on the server, from the token and the peer address; nothing the
client writes in a body chooses them.
"""

import functools
import hashlib
import ipaddress
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest

from board.exceptions import Unauthorized
from board.models import PostingPolicy
from board.posting import engines, limits, statements
from board.posting.statements import Caller  # made from its token row there, or anonymous here
from receipts.faults import fault_answer, nothing_saved_if_failed

ANONYMOUS_SCOPE = "anonymous"


def client_address(request: HttpRequest) -> str:
    """The client's address; `X-Forwarded-For` counts only from a trusted proxy.

    Walking the header from the right, the first address that is not a trusted proxy is
    the client: everything left of it was written by someone we cannot vouch for.
    """
    remote_addr = request.META.get("REMOTE_ADDR", "")
    forwarded_for = request.headers.get("X-Forwarded-For")
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


# --- Admission ---------------------------------------------------------------------------


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def caller_authenticate(*, token: str | None, address: str) -> Caller:
    """The caller behind a bearer token (or none); unknown and revoked tokens are refused.
    A call without a token needs no database (POST /request-ids answers with none, and
    so does MCP's transport: a read then fails as the read, not as its token check).
    Reads never write: a token's last use is recorded only by a write that succeeded."""
    if token is None:
        return anonymous_caller(None, address)
    _, found = statements.posting_read(token_hash(token))
    return found or anonymous_caller(token, address)


@dataclass(frozen=True)
class PostAdmission:
    """A post let in by step 1 and counted by step 2: who posts, the policy as the call
    arrived, and what its count took (`statements.Taken`)."""

    caller: Caller
    policy: PostingPolicy
    taken: statements.Taken


def post_admit(
    *, token: str | None, address: str, operation: str, request_id: uuid.UUID, now: datetime
) -> PostAdmission:
    """Step 1's token check and step 2's count, with step 5's overall take made
    provisionally unless the identity already has a committed receipt (then no entry can
    be made, so it takes none): one statement on PostgreSQL, the rules in Python on
    SQLite (board/posting/engines/). A caller step 1 refuses is counted against its
    address, then refused with Unauthorized. The overall take is given back when no entry
    is made (`limits.overall_take`). A fault here saved nothing."""
    try:
        admitted = engines.for_connection().admit(statements.Admission(
            token_hash=None if token is None else token_hash(token),
            address_source=address_source(address),
            anonymous_allowed=settings.SETTLE_ALLOW_ANONYMOUS,
            anonymous_scope=ANONYMOUS_SCOPE,
            source_default_limit=settings.SETTLE_SOURCE_HOURLY_LIMIT,
            overall=limits.OVERALL_SOURCE,
            overall_default_limit=settings.SETTLE_OVERALL_HOURLY_LIMIT,
            hour=limits.hour_of(now),
            operation=operation,
            request_id=request_id,
        ))
    except DatabaseError as error:
        raise fault_answer(error, what="post before its claim") from None
    caller = admitted.caller or anonymous_caller(token, address, posting=True)
    return PostAdmission(caller=caller, policy=admitted.policy, taken=admitted.taken)


def post_refusal_count(*, token: str | None, address: str, now: datetime) -> None:
    """Step 1 refused a post's shape: the token is judged first (a bad one is `401`
    whatever the body), and the refusal writes nothing but its count, against the
    client's address."""
    with nothing_saved_if_failed():
        policy, found = statements.posting_read(None if token is None else token_hash(token))
    try:
        found or anonymous_caller(token, address, posting=True)
    finally:
        with nothing_saved_if_failed():
            limits.counter_take(
                source=address_source(address),
                limit=limits.hourly_limits(None, policy).source,
                now=now,
            )


def anonymous_caller(token: str | None, address: str, *, posting: bool = False) -> Caller:
    """The caller where no live token was found (a token's own caller comes with its
    row: `statements.Caller`). Step 1's token check: a token presented, unknown or
    revoked, is refused with Unauthorized, and, for a post, so is no token where
    anonymous posting is off."""
    if token is not None:
        raise Unauthorized()
    if posting and not settings.SETTLE_ALLOW_ANONYMOUS:
        raise Unauthorized("posting needs a bearer token on this server")
    return Caller(principal=None, scope=ANONYMOUS_SCOPE, source=address_source(address))
