"""Reads of the receipt engine's records for operators. Nothing here writes.

An operator looks a `request_id` up without knowing whose it was. Receipts carry the
request_id in the clear, so every scope that still holds one is found directly. Attempts
and tombstones are keyed by the identity digest only (SPEC 8: nothing of the request is
kept in a tombstone), so for those the caller names the scopes to try; the digests of
all of them are computed here and looked up in one query each.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from receipts.fingerprint import Identity
from receipts.models import Attempt, Receipt, Tombstone
from receipts.services import tombstones_in_force


@dataclass
class ScopeTrace:
    """What is known of one request_id in one scope."""

    scope: str
    key: uuid.UUID
    receipt: Receipt | None = None
    tombstone: Tombstone | None = None
    attempts: list[Attempt] = field(default_factory=list)


def request_trace(
    *, request_id: uuid.UUID, operation: str, scopes: Iterable[str], now: datetime
) -> list[ScopeTrace]:
    """Every scope in which `request_id` left a receipt, a live tombstone or an attempt."""
    receipts = list(Receipt.objects.filter(request_id=request_id, operation=operation))
    traces: dict[uuid.UUID, ScopeTrace] = {}
    for scope in [*(r.scope for r in receipts), *scopes]:
        key = Identity(scope, operation, request_id).key
        traces.setdefault(key, ScopeTrace(scope=scope, key=key))
    for receipt in receipts:
        key = Identity(receipt.scope, operation, request_id).key
        traces[key].receipt = receipt
    for tombstone in tombstones_in_force(now=now).filter(key__in=traces.keys()):
        traces[tombstone.key].tombstone = tombstone
    for attempt in Attempt.objects.filter(identity__in=traces.keys()).order_by("created_at", "id"):
        traces[attempt.identity].attempts.append(attempt)
    for trace in traces.values():
        made = receipt_made_attempt(trace)
        if made is not None:
            # First among attempts of the same moment (a stable sort keeps it there).
            trace.attempts.insert(0, made)
            trace.attempts.sort(key=lambda attempt: attempt.created_at)
    found = [t for t in traces.values() if t.receipt or t.tombstone or t.attempts]
    return sorted(found, key=lambda t: t.receipt.first_seen_at if t.receipt else now)


def receipt_made_attempt(trace: ScopeTrace) -> Attempt | None:
    """The attempt that made the trace's receipt, as the receipt records it (its first
    route and time): the write logs no row of its own for it (receipts/models.py). None
    without a receipt, or when the log holds that attempt's row (receipts made before
    the receipt stood for it)."""
    receipt = trace.receipt
    if receipt is None or any(a.outcome == Attempt.Outcome.CREATED for a in trace.attempts):
        return None
    return Attempt(
        identity=trace.key, receipt_id=receipt.pk, route=receipt.first_route,
        outcome=Attempt.Outcome.CREATED, detail="", created_at=receipt.first_seen_at,
    )
