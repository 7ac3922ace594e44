"""Operator actions (SPEC 9, "Operators"): which state each applies to, one-off attempts
outside the schedule, compare-and-set against a late worker, and the audit."""

import time

import pytest
from django.utils import timezone

from board import services as board
from maintenance.deliveries import actions, attempts, endpoints, sweep, webhooks
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from maintenance.exceptions import DeliveryRefused
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.maintenance.conftest import delivery_of, drive, endpoint_for, in_thread, post_entry
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def unknown_delivery(receiver, *, supports: str = "none") -> Delivery:
    """A delivery whose only attempt timed out on a `none` endpoint: outcome_unknown."""
    endpoint_for(receiver, supports=supports)
    receiver.script = [Behaviour(hang=True)]
    if supports == "lookup":
        receiver.lookup_status = 503
    delivery = delivery_of(post_entry())
    sweep.delivery_run(delivery_id=delivery.pk)
    if supports == "lookup":
        # the lookups answer 503 until the deadline passes
        Delivery.objects.filter(pk=delivery.pk).update(deadline_at=timezone.now())
        sweep.deliveries_sweep()
    delivery.refresh_from_db()
    assert delivery.state == "outcome_unknown"
    return delivery


def test_cancellation_racing_a_successful_send_ends_succeeded(receiver):
    endpoint_for(receiver)
    entry = post_entry()
    delivery = delivery_of(entry)
    cancelled = []

    def cancel_while_in_flight():
        cancelled.append(moderation.delivery_cancel(
            actor="operator", delivery_id=delivery.pk, reason="changed my mind"
        ).state)

    receiver.script = [Behaviour(status=200, before=cancel_while_in_flight)]

    delivery = drive(delivery)

    # then: the cancel was taken as a request, and the real result (delivered) stands
    assert cancelled == ["cancel_requested"]
    assert delivery.state == "succeeded"
    assert AuditEvent.objects.filter(action="delivery_cancel").count() == 1


def test_cancel_on_an_accepted_delivery_cancels_it(receiver):
    endpoint_for(receiver)
    delivery = delivery_of(post_entry())

    delivery = moderation.delivery_cancel(actor="operator", delivery_id=delivery.pk)

    assert delivery.state == "cancelled"
    assert sweep.delivery_run(delivery_id=delivery.pk).state == "cancelled"
    assert receiver.seen == []


@pytest.mark.parametrize("action", ["cancel", "mark"])
def test_cancel_and_marks_are_refused_on_a_final_state_and_change_nothing(receiver, action):
    endpoint_for(receiver)
    delivery = drive(delivery_of(post_entry()))
    assert delivery.state == "succeeded"

    with pytest.raises(DeliveryRefused, match="not to succeeded"):
        if action == "cancel":
            moderation.delivery_cancel(actor="operator", delivery_id=delivery.pk)
        else:
            moderation.delivery_mark(
                actor="operator", delivery_id=delivery.pk, state="failed", reason="no"
            )

    delivery.refresh_from_db()
    assert delivery.state == "succeeded"
    assert AuditEvent.objects.filter(target_type="delivery").count() == 0


def test_a_mark_needs_a_reason(receiver):
    delivery = unknown_delivery(receiver)

    with pytest.raises(DeliveryRefused, match="reason"):
        moderation.delivery_mark(
            actor="operator", delivery_id=delivery.pk, state="succeeded", reason="  "
        )

    delivery.refresh_from_db()
    assert delivery.state == "outcome_unknown"


def test_marks_are_refused_while_running_and_a_late_worker_never_overwrites_a_mark(
    receiver
):
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(hang=True)]
    delivery = delivery_of(post_entry())
    worker = in_thread(sweep.delivery_run, delivery_id=delivery.pk)
    while Delivery.objects.get(pk=delivery.pk).state != "running":
        time.sleep(0.02)

    # when: an operator tries to mark it while it runs
    with pytest.raises(DeliveryRefused, match="not to running"):
        actions.delivery_mark(delivery_id=delivery.pk, state="failed", reason="gone")
    worker.join()
    # and marks it once the timeout made it unknown; then a stale result arrives
    stale_attempt = Delivery.objects.get(pk=delivery.pk).current_attempt
    actions.delivery_mark(delivery_id=delivery.pk, state="failed", reason="receiver says no")
    late = attempts.attempt_settle(
        delivery.pk, stale_attempt, "send",
        webhooks.ReceiverAnswer(status_code=200, error="", request_left=True, duration_ms=5),
    )

    # then: the operator's decision stands
    assert late is None
    delivery.refresh_from_db()
    assert delivery.state == "failed" and "receiver says no" in delivery.note


def test_mark_succeeded_settles_an_unknown_outcome_and_audits_it(receiver):
    delivery = unknown_delivery(receiver)

    delivery = moderation.delivery_mark(
        actor="operator", delivery_id=delivery.pk, state="succeeded",
        reason="the receiver's log shows it",
    )

    assert delivery.state == "succeeded" and delivery.settled_at is not None
    event = AuditEvent.objects.get(action="delivery_mark_succeeded")
    assert event.reason == "the receiver's log shows it"
    assert event.target_ids == [str(delivery.pk)]
    assert event.details["from"] == "outcome_unknown"


def test_resend_is_one_attempt_with_the_same_id(receiver):
    delivery = unknown_delivery(receiver)

    delivery = moderation.delivery_resend(actor="operator", delivery_id=delivery.pk)

    assert delivery.state == "succeeded"
    first, second = receiver.posts()
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == str(delivery.pk)
    assert first.body == second.body
    kinds = DeliveryAttempt.objects.filter(delivery=delivery).order_by("started_at")
    assert [a.kind for a in kinds] == ["send", "resend"]
    assert delivery.attempts == 1  # outside the schedule
    assert AuditEvent.objects.filter(action="delivery_resend").count() == 1


def test_resend_answered_5xx_stays_unknown(receiver):
    delivery = unknown_delivery(receiver)
    receiver.script = [Behaviour(status=503)]

    delivery = actions.delivery_resend(delivery_id=delivery.pk)

    assert delivery.state == "outcome_unknown"
    assert len(receiver.posts()) == 2


def test_resend_answered_4xx_fails(receiver):
    delivery = unknown_delivery(receiver)
    receiver.script = [Behaviour(status=422)]

    assert actions.delivery_resend(delivery_id=delivery.pk).state == "failed"


def test_resend_is_refused_when_the_entry_is_no_longer_public(receiver):
    delivery = unknown_delivery(receiver)
    board.entry_set_visible(entry_id=delivery.entry_id, visible=False)

    with pytest.raises(DeliveryRefused, match="no longer public"):
        actions.delivery_resend(delivery_id=delivery.pk)

    assert len(receiver.posts()) == 1


def test_resend_is_refused_on_an_accepted_delivery(receiver):
    endpoint_for(receiver)
    delivery = delivery_of(post_entry())

    with pytest.raises(DeliveryRefused, match="not to accepted"):
        actions.delivery_resend(delivery_id=delivery.pk)


def test_reconcile_settles_succeeded_when_the_receiver_has_it(receiver):
    delivery = unknown_delivery(receiver, supports="lookup")
    receiver.lookup_status = None  # the real answer: the receiver holds the notice

    delivery = moderation.delivery_reconcile(actor="operator", delivery_id=delivery.pk)

    assert delivery.state == "succeeded"
    assert len(receiver.posts()) == 1
    assert AuditEvent.objects.filter(action="delivery_reconcile").count() == 1


def test_reconcile_answered_404_settles_failed(receiver):
    delivery = unknown_delivery(receiver, supports="lookup")
    receiver.lookup_status = None
    receiver.notices.clear()

    delivery = actions.delivery_reconcile(delivery_id=delivery.pk)

    assert delivery.state == "failed"
    assert "never received" in delivery.note


def test_reconcile_with_no_clear_answer_leaves_it_unknown(receiver):
    delivery = unknown_delivery(receiver, supports="lookup")

    assert actions.delivery_reconcile(delivery_id=delivery.pk).state == "outcome_unknown"


def test_reconcile_is_refused_for_an_endpoint_without_lookup(receiver):
    delivery = unknown_delivery(receiver, supports="none")

    with pytest.raises(DeliveryRefused, match="supports lookup"):
        actions.delivery_reconcile(delivery_id=delivery.pk)
    assert receiver.lookups() == []


def test_send_test_is_signed_outside_any_delivery_and_checks_the_lookup(receiver):
    endpoint = endpoint_for(receiver, supports="lookup")

    result = moderation.endpoint_send_test(actor="operator", name=endpoint.name)

    assert result.ok and result.status_code == 200
    assert result.lookup_answers_404 is True
    [seen] = receiver.posts()
    assert seen.verified and b'"type":"settle.test"' in seen.body
    assert Delivery.objects.count() == 0


def test_endpoint_changes_are_audited_without_the_secret_or_the_url_path(receiver):
    endpoint, secret = moderation.endpoint_add(
        actor="admin", name="audited", url="https://hooks.example/p/SECRET-PATH?key=k",
    )
    _, rotated = moderation.endpoint_rotate(actor="admin", name="audited")
    moderation.endpoint_disable(actor="admin", name="audited", reason="noisy")
    moderation.endpoint_enable(actor="admin", name="audited")

    events = list(AuditEvent.objects.order_by("id"))
    assert [e.action for e in events] == [
        "endpoint_add", "endpoint_rotate", "endpoint_disable", "endpoint_enable"
    ]
    for event in events:
        text = str(event.details) + event.reason
        assert secret not in text and rotated not in text and "SECRET-PATH" not in text
    assert events[0].details["url"] == "https://hooks.example"


def test_allowing_private_addresses_needs_a_reason():
    with pytest.raises(moderation.ReasonRequired):
        moderation.endpoint_add(
            actor="admin", name="internal", url="http://10.0.0.5/hook", allow_private=True
        )
    assert AuditEvent.objects.count() == 0


def test_moderators_see_scheme_and_host_only():
    endpoint, _ = endpoints.endpoint_add(
        name="shown", url="https://hooks.example:8443/p/secret-token?x=1"
    )

    assert endpoints.endpoint_display_url(endpoint, full=False) == "https://hooks.example:8443"
    assert endpoints.endpoint_display_url(endpoint, full=True) == endpoint.url


def test_endpoint_add_refuses_without_public_url(settings):
    settings.SETTLE_PUBLIC_URL = ""

    with pytest.raises(DeliveryRefused, match="SETTLE_PUBLIC_URL"):
        endpoints.endpoint_add(name="early", url="https://hooks.example/x")
