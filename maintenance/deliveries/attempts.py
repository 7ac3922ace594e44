"""One attempt of one delivery: claimed (`running`, with its attempt row) before the
request leaves, sent with no transaction open, settled by `Delivery.attempt_ended`.

A worker that dies between claim and settle leaves a lease that ends; the sweep then
settles the attempt as "the request left and no answer came" (`LEASE_ENDED`).
"""

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection, transaction
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now
from django.utils import timezone

from board.entries.objects import public_entry_object, timestamp
from board.models import Entry
from maintenance.deliveries import rules, webhooks
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint

# The deliveries' logger keeps the name operators' filters and alerts know.
log = logging.getLogger("maintenance.outbox")

S = Delivery.State
K = DeliveryAttempt.Kind


@dataclass(frozen=True)
class Claim:
    """An attempt that won its compare-and-set and may now leave the process."""

    delivery_id: uuid.UUID
    attempt_id: uuid.UUID
    kind: str
    timeout: float


def delivery_body(entry: Entry) -> bytes:
    """The notice, built from the entry as it is now: the same bytes while it is unchanged."""
    payload = {
        "type": "entry.created",
        "timestamp": timestamp(entry.created_at),
        "data": public_entry_object(entry, settings.SETTLE_PUBLIC_URL),
    }
    return json.dumps(payload, separators=(",", ":")).encode()


def live_secrets(endpoint: Endpoint, now: datetime) -> list[str]:
    secrets = [endpoint.secret]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires and expires > now:
        secrets.append(endpoint.previous_secret)
    return secrets


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def allowance_covers(endpoint: Endpoint, url: str) -> bool:
    """Whether the endpoint's private-address allowance lifts the address rule for `url`:
    only for the one host it was given for, the endpoint URL's host, whatever the port.
    A lookup URL on any other host is vetted as if there were no allowance."""
    if not endpoint.allow_private:
        return False
    host = host_of(url)
    return bool(host) and host == host_of(endpoint.url)


def attempt_claim(
    delivery: Delivery, *, kind: str, timeout: timedelta, count: bool
) -> Claim | None:
    """`accepted`/`outcome_unknown` → `running`, with the attempt row, before any request."""
    attempt_id = uuid.uuid4()
    margin = settings.SETTLE_DELIVERY_LEASE_MARGIN
    lease = ExpressionWrapper(Now() + (timeout + margin), output_field=DateTimeField())
    with transaction.atomic():
        if not delivery.claim(attempt_id=attempt_id, lease=lease, count=count):
            return None
        DeliveryAttempt.objects.create(
            attempt_id=attempt_id, delivery_id=delivery.pk, kind=kind,
            started_at=timezone.now(),
        )
    return Claim(
        delivery_id=delivery.pk, attempt_id=attempt_id, kind=kind,
        timeout=timeout.total_seconds(),
    )


def _request(claim: Claim, endpoint: Endpoint, body: bytes | None) -> webhooks.ReceiverAnswer:
    now = timezone.now()
    lookup = claim.kind in (K.LOOKUP, K.RECONCILE)
    url = endpoint.url
    if lookup:
        url = webhooks.lookup_url(endpoint.lookup_url, str(claim.delivery_id))
    payload = b"" if lookup else body
    headers = webhooks.signed_headers(
        message_id=str(claim.delivery_id), secrets=live_secrets(endpoint, now), body=payload
    )
    if lookup:
        headers.pop("Content-Type")
    return webhooks.request(
        method="GET" if lookup else "POST", url=url, headers=headers, body=payload,
        timeout=claim.timeout, allow_private=allowance_covers(endpoint, url),
    )


# What an attempt came to when its answer could not be used (or handling it failed).
UNUSABLE = webhooks.ReceiverAnswer(
    status_code=None, error="internal_error", request_left=True, duration_ms=0
)
LEASE_ENDED = webhooks.ReceiverAnswer(
    status_code=None, error="lease_ended", request_left=True, duration_ms=0
)


def attempt_settle(
    delivery_id: uuid.UUID, attempt_id: uuid.UUID, kind: str, answer: webhooks.ReceiverAnswer,
    *, now: datetime | None = None,
) -> Delivery | None:
    """Write an attempt's result, if the delivery still waits for this attempt."""
    now = now or timezone.now()
    for _ in range(3):
        delivery = Delivery.objects.select_related("endpoint").filter(
            pk=delivery_id, current_attempt=attempt_id,
            state__in=[S.RUNNING, S.CANCEL_REQUESTED],
        ).first()
        if delivery is None:
            break  # an operator settled it meanwhile: their decision stands
        with transaction.atomic():
            if not delivery.attempt_ended(kind=kind, answer=answer, now=now):
                continue  # cancelled while we decided: decide again with the new state
            _attempt_answer_record(attempt_id, answer)
            _endpoint_health(delivery.endpoint, kind, answer, now)
        log.info(
            "delivery %s %s attempt: %s -> %s", delivery_id, kind,
            answer.status_code or answer.error, delivery.state,
        )
        return delivery
    if answer is not LEASE_ENDED:
        # The operator's decision stands, but the evidence of what this attempt saw is
        # kept. (A lease the sweep ends after the worker settled changes nothing.)
        _attempt_answer_record(attempt_id, answer)
    return None


def _attempt_answer_record(attempt_id: uuid.UUID, answer: webhooks.ReceiverAnswer) -> None:
    DeliveryAttempt.objects.filter(attempt_id=attempt_id).update(
        duration_ms=answer.duration_ms if answer is not LEASE_ENDED else None,
        status_code=answer.status_code,
        error=answer.error,
        request_left=answer.request_left,
    )


def _endpoint_health(endpoint: Endpoint, kind: str, answer: webhooks.ReceiverAnswer, now: datetime):
    if kind not in (K.SEND, K.RESEND):
        return
    if rules.answer_kind(answer) == "ok":
        Endpoint.objects.filter(pk=endpoint.pk).update(last_success_at=now, failing_since=None)
        return
    Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=now)
    if answer.status_code == 410:
        Endpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
            enabled=False, disabled_at=now, updated_at=now,
            disabled_reason="the endpoint answered 410 Gone",
        )
        log.warning("endpoint %s disabled: it answered 410", endpoint.name)


def attempt_make(delivery: Delivery, *, kind: str, timeout: timedelta, count: bool,
                 body: bytes | None) -> Delivery | None:
    """Claim, send with no transaction open, settle. None when the claim was lost."""
    if connection.in_atomic_block:
        # SPEC 9: a request never leaves while a transaction is open (it would hold
        # locks, or commit the claim only after the request, for the whole timeout).
        raise RuntimeError("a delivery request must not be made inside a transaction")
    claim = attempt_claim(delivery, kind=kind, timeout=timeout, count=count)
    if claim is None:
        return None
    try:
        answer = _request(claim, delivery.endpoint, body)
    except Exception as error:
        # A bug or an unexpected failure must not leave the row to its lease when we
        # know the request may have left: settle it as "left, no answer" now.
        log.error("delivery %s attempt failed unexpectedly: %s", claim.delivery_id,
                  type(error).__name__)
        answer = UNUSABLE
    try:
        return attempt_settle(claim.delivery_id, claim.attempt_id, kind, answer)
    except Exception as error:
        # Settling what came back failed (an answer nothing foresaw, a bug): the attempt
        # is still settled, as "the request left, no usable answer", never left running.
        log.error("delivery %s attempt not settled as answered: %s", claim.delivery_id,
                  type(error).__name__)
        if answer is UNUSABLE:
            raise
        return attempt_settle(claim.delivery_id, claim.attempt_id, kind, UNUSABLE)
