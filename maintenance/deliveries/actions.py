"""An operator's actions on one delivery (SPEC 9): `Reconcile`, `Resend`, `Cancel`, the
marks; the service API the console and the `deliveries` command call (through
moderation.actions, which audits). Each state change is one of `Delivery`'s
transitions, so an action that lost a race refuses instead of overwriting.

Every refusal raises `DeliveryRefused` with one line an operator can read, and changes
nothing. `delivery_resend` and `delivery_reconcile` make a request: call them with no
transaction open.
"""

import uuid
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from board.models import Entry
from maintenance.deliveries.attempts import attempt_make, delivery_body
from maintenance.deliveries.endpoints import no_transaction
from maintenance.deliveries.models import NOTE_LIMIT, Delivery, DeliveryAttempt, Endpoint
from maintenance.exceptions import DeliveryRefused

S = Delivery.State
K = DeliveryAttempt.Kind


def _delivery(delivery_id) -> Delivery:
    try:
        key = uuid.UUID(str(delivery_id).strip())
    except ValueError:
        raise DeliveryRefused(f"{delivery_id!r} is not a delivery id") from None
    found = Delivery.objects.select_related("endpoint").filter(pk=key).first()
    if found is None:
        raise DeliveryRefused(f"no delivery with id {key}")
    return found


def delivery_reconcile(*, delivery_id) -> Delivery:
    """Look the delivery up at its endpoint now: on `outcome_unknown`, one lookup outside
    the schedule (200 succeeded, 404 failed, else unchanged); on an `accepted` delivery
    waiting for its lookup, that lookup now, with the schedule's outcome."""
    no_transaction()
    delivery = _delivery(delivery_id)
    if delivery.endpoint.supports != Endpoint.Supports.LOOKUP:
        raise DeliveryRefused("reconcile needs an endpoint that supports lookup")
    if delivery.state == S.OUTCOME_UNKNOWN:
        kind, timeout = K.RECONCILE, settings.SETTLE_DELIVERY_TIMEOUT
    elif delivery.state == S.ACCEPTED and delivery.lookup_due:
        kind = K.LOOKUP
        timeout = min(settings.SETTLE_DELIVERY_TIMEOUT, delivery.deadline_at - timezone.now())
        if timeout <= timedelta(0):
            raise DeliveryRefused("the delivery's deadline has passed; the sweep settles it")
    else:
        raise DeliveryRefused(
            f"reconcile applies to outcome_unknown deliveries and to accepted ones waiting "
            f"for a lookup, not to {delivery.state}"
        )
    settled = attempt_make(delivery, kind=kind, timeout=timeout, count=False, body=None)
    return _after(delivery, settled)


def delivery_resend(*, delivery_id) -> Delivery:
    """Send an `outcome_unknown` delivery once more, same id, outside schedule and
    deadline: 2xx succeeded, a 4xx that is not retried failed, else still unknown."""
    no_transaction()
    delivery = _delivery(delivery_id)
    if delivery.state != S.OUTCOME_UNKNOWN:
        raise DeliveryRefused(
            f"resend applies to outcome_unknown deliveries, not to {delivery.state}"
        )
    entry = Entry.objects.filter(pk=delivery.entry_id).first()
    if entry is None or not entry.is_public:
        raise DeliveryRefused("the entry is no longer public; it is never sent again")
    if not settings.SETTLE_PUBLIC_URL:
        raise DeliveryRefused("SETTLE_PUBLIC_URL must be set to send deliveries")
    settled = attempt_make(
        delivery, kind=K.RESEND, timeout=settings.SETTLE_DELIVERY_TIMEOUT, count=False,
        body=delivery_body(entry),
    )
    return _after(delivery, settled)


def _after(delivery: Delivery, settled: Delivery | None) -> Delivery:
    if settled is None:
        raise DeliveryRefused("the delivery changed meanwhile; nothing was sent")
    return Delivery.objects.select_related("endpoint").get(pk=delivery.pk)


def delivery_cancel(*, delivery_id, reason: str = "") -> Delivery:
    """`accepted`: cancelled (or outcome_unknown if an earlier attempt may have landed);
    `running`: cancel_requested, and the attempt in flight settles it."""
    delivery = _delivery(delivery_id)
    if delivery.state not in (S.ACCEPTED, S.RUNNING):
        raise DeliveryRefused(
            f"cancel applies to accepted and running deliveries, not to {delivery.state}"
        )
    note = (
        ("cancelled: " + reason.strip())[:NOTE_LIMIT] if reason.strip()
        else "cancelled by an operator"
    )
    if not delivery.cancel(now=timezone.now(), note=note):
        raise DeliveryRefused("the delivery changed meanwhile; nothing was cancelled")
    return Delivery.objects.select_related("endpoint").get(pk=delivery.pk)


MARKABLE = (S.ACCEPTED, S.OUTCOME_UNKNOWN)


def delivery_mark(*, delivery_id, state: str, reason: str) -> Delivery:
    """An operator's word on the outcome: `succeeded` or `failed`, with a reason."""
    reason = (reason or "").strip()
    if not reason:
        raise DeliveryRefused("a reason is required to mark a delivery")
    if state not in (S.SUCCEEDED, S.FAILED):
        raise DeliveryRefused("a delivery can be marked succeeded or failed")
    delivery = _delivery(delivery_id)
    if delivery.state not in MARKABLE:
        raise DeliveryRefused(
            f"mark applies to accepted and outcome_unknown deliveries, not to {delivery.state}"
        )
    if not delivery.mark(state=state, reason=reason, now=timezone.now()):
        raise DeliveryRefused("the delivery changed meanwhile; nothing was marked")
    return Delivery.objects.select_related("endpoint").get(pk=delivery.pk)
