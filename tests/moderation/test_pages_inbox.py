"""The unknown-outcome inbox and the delivery actions in the console (SPEC 7, 9), on
deliveries made by the real engine against a real receiver on 127.0.0.1.

A delivery reaches `outcome_unknown` the way it does in production: the receiver reads
the request and closes the connection without answering (the request left, no answer
came), on an endpoint that supports neither dedupe nor lookup; or, on a lookup endpoint,
every lookup answers 503 until the deadline. The engine runs in this process as the
worker would (`drive`, from the maintenance tests), with no transaction open, so these
tests are transactional.
"""

import re
from datetime import UTC, timedelta

import pytest

from board import services as board
from board.entries.fields import entry_fields_read
from maintenance.deliveries import sweep
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from moderation import actions as moderation
from moderation import selectors
from moderation.models import AuditEvent
from tests.conftest import question
from tests.maintenance.conftest import (  # noqa: F401 (fixtures)
    delivery_of,
    delivery_settings,
    drive,
    endpoint_for,
    receiver,
)
from tests.maintenance.webhook_receiver import Behaviour
from tests.moderation.conftest import logged_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]

PAGE = "/console/deliveries/"
UNKNOWN = Delivery.State.OUTCOME_UNKNOWN


def posted(**overrides) -> tuple[str, int]:
    payload = question(**overrides)
    entry = board.entry_post(
        token=None, address="127.0.0.1", fields=entry_fields_read(payload), route="api"
    ).entry
    return payload["request_id"], entry.pk


def lost(receiver, endpoint) -> Delivery:  # noqa: F811
    """A delivery whose request the receiver read and never answered."""
    receiver.script.append(Behaviour(close=True))
    _, entry_id = posted()
    delivery = drive(Delivery.objects.get(entry_id=entry_id, endpoint=endpoint))
    assert delivery.state == UNKNOWN
    return delivery


def lost_on_lookup(receiver, endpoint, settings) -> Delivery:  # noqa: F811
    """On a lookup endpoint: the send lost, every lookup 503, then the deadline."""
    settings.SETTLE_DELIVERY_DEADLINE = timedelta(seconds=30)  # under the minute between lookups
    receiver.lookup_status = 503
    delivery = lost(receiver, endpoint)
    receiver.lookup_status = None  # from now on the receiver answers lookups truly
    return delivery


def inbox_ids(page) -> list[str]:
    return [str(row.delivery.id) for row in page.context["inbox"]]


def act(client, delivery: Delivery, action: str, **data):
    return client.post(
        f"/console/deliveries/{delivery.pk}/{action}", {"next": PAGE, **data}, follow=True
    )


def audit_of(delivery: Delivery) -> list[AuditEvent]:
    return [e for e in AuditEvent.objects.order_by("id") if e.target_ids == [str(delivery.pk)]]


def test_the_inbox_lists_each_unknown_outcome_with_its_evidence(administrator, receiver):  # noqa: F811
    endpoint = endpoint_for(receiver)
    delivery = lost(receiver, endpoint)
    (attempt,) = DeliveryAttempt.objects.filter(delivery=delivery)
    console = logged_in(administrator)

    for path in (PAGE, "/console/operations/"):
        page = console.get(path)
        html = page.content.decode()
        (row,) = page.context["inbox"]
        assert row.delivery.pk == delivery.pk and row.attempts == [attempt]
        inbox = html[html.index('id="inbox"'):]
        inbox = inbox[: inbox.index("</section>")]
        assert str(delivery.pk) in inbox and endpoint.name in inbox
        assert f'href="/console/entries/{delivery.entry_id}/"' in inbox
        assert str(attempt.attempt_id) in inbox and f"{attempt.duration_ms} ms" in inbox
        assert attempt.error and attempt.status_code is None and attempt.error in inbox
        assert re.search(r"<td>\d+ (s|min)</td>", inbox)  # its age
        for label in ("Resend", "Mark succeeded", "Mark failed"):
            assert f">{label}</button>" in inbox
        assert ">Reconcile</button>" not in inbox  # this endpoint has no lookup


def test_resend_settles_it_and_it_leaves_the_inbox(administrator, receiver):  # noqa: F811
    endpoint = endpoint_for(receiver)
    delivery = lost(receiver, endpoint)
    console = logged_in(administrator)

    page = act(console, delivery, "resend")

    assert f"Resent: delivery {delivery.pk} is succeeded." in page.content.decode()
    assert inbox_ids(page) == []
    delivery.refresh_from_db()
    assert delivery.state == "succeeded"
    # The same webhook-id twice; the receiver kept the notice once.
    assert [p.headers["webhook-id"] for p in receiver.posts()] == [str(delivery.pk)] * 2
    assert receiver.duplicates == 1
    (event,) = audit_of(delivery)
    assert (event.action, event.actor, event.details["from"], event.details["to"]) == (
        "delivery_resend", "admin", "outcome_unknown", "succeeded"
    )


def test_reconcile_asks_a_lookup_endpoint_and_settles_succeeded(
    administrator, receiver, settings  # noqa: F811
):
    endpoint = endpoint_for(receiver, supports="lookup")
    delivery = lost_on_lookup(receiver, endpoint, settings)
    console = logged_in(administrator)
    assert ">Reconcile</button>" in console.get(PAGE).content.decode()

    page = act(console, delivery, "reconcile")

    assert f"Reconciled: delivery {delivery.pk} is succeeded." in page.content.decode()
    delivery.refresh_from_db()
    assert delivery.state == "succeeded" and inbox_ids(page) == []
    assert receiver.lookups()[-1].path == f"/lookup/{delivery.pk}"
    assert len(receiver.posts()) == 1  # reconciling sends nothing
    assert [e.action for e in audit_of(delivery)] == ["delivery_reconcile"]


def test_marking_failed_needs_a_reason(administrator, receiver):  # noqa: F811
    delivery = lost(receiver, endpoint_for(receiver))
    console = logged_in(administrator)

    refused = act(console, delivery, "mark-failed", reason="  ")

    assert "not changed: a reason is required to mark a delivery." in refused.content.decode()
    delivery.refresh_from_db()
    assert delivery.state == UNKNOWN and audit_of(delivery) == []
    assert inbox_ids(refused) == [str(delivery.pk)]

    marked = act(console, delivery, "mark-failed", reason="receiver confirmed it never arrived")

    delivery.refresh_from_db()
    assert delivery.state == "failed" and inbox_ids(marked) == []
    (event,) = audit_of(delivery)
    assert event.action == "delivery_mark_failed"
    assert event.reason == "receiver confirmed it never arrived"


def test_marking_succeeded_records_the_operators_word(administrator, receiver):  # noqa: F811
    delivery = lost(receiver, endpoint_for(receiver))

    act(logged_in(administrator), delivery, "mark-succeeded", reason="seen in the CRM")

    delivery.refresh_from_db()
    assert delivery.state == "succeeded" and "seen in the CRM" in delivery.note
    assert [e.action for e in audit_of(delivery)] == ["delivery_mark_succeeded"]


def test_a_settled_delivery_refuses_marks_and_cancel_with_a_message(administrator, receiver):  # noqa: F811
    endpoint = endpoint_for(receiver)
    _, entry_id = posted()
    delivery = drive(Delivery.objects.get(entry_id=entry_id, endpoint=endpoint))
    assert delivery.state == "succeeded"
    console = logged_in(administrator)

    for action, why in [
        ("mark-failed", "mark applies to accepted and outcome_unknown deliveries, not to "
                        "succeeded"),
        ("cancel", "cancel applies to accepted and running deliveries, not to succeeded"),
        ("resend", "resend applies to outcome_unknown deliveries, not to succeeded"),
    ]:
        page = act(console, delivery, action, reason="r")
        assert f"Delivery {delivery.pk} not changed: {why}." in page.content.decode()
    delivery.refresh_from_db()
    assert delivery.state == "succeeded" and audit_of(delivery) == []


def test_resend_is_refused_once_the_entry_is_hidden(administrator, receiver):  # noqa: F811
    delivery = lost(receiver, endpoint_for(receiver))
    moderation.entry_hide(actor="op", entry_id=delivery.entry_id, reason="spam")

    page = act(logged_in(administrator), delivery, "resend")

    assert "the entry is no longer public" in page.content.decode()
    delivery.refresh_from_db()
    assert delivery.state == UNKNOWN and len(receiver.posts()) == 1


def test_cancel_from_the_operations_page_before_anything_is_sent(administrator, receiver):  # noqa: F811
    endpoint = endpoint_for(receiver)
    request_id, entry_id = posted()  # accepted: no worker has run it
    delivery = Delivery.objects.get(entry_id=entry_id, endpoint=endpoint)
    console = logged_in(administrator)
    lookup = console.get("/console/operations/", {"request_id": request_id})
    (found,) = lookup.context["found"]
    assert [row.delivery.pk for row in found.deliveries] == [delivery.pk]
    assert f'formaction="/console/deliveries/{delivery.pk}/cancel"' in lookup.content.decode()

    page = console.post(
        f"/console/deliveries/{delivery.pk}/cancel",
        {"next": f"/console/operations/?request_id={request_id}", "reason": "wrong board"},
        follow=True,
    )

    delivery.refresh_from_db()
    assert delivery.state == "cancelled" and receiver.seen == []
    assert f"delivery {delivery.pk} is cancelled" in page.content.decode()
    assert page.redirect_chain[-1][0] == f"/console/operations/?request_id={request_id}"
    (event,) = audit_of(delivery)
    assert (event.action, event.reason) == ("delivery_cancel", "wrong board")


def test_the_list_filters_by_state_and_endpoint_with_attempts(administrator, receiver):  # noqa: F811
    first = endpoint_for(receiver, name="first")
    second = endpoint_for(receiver, name="second")
    receiver.script.append(Behaviour(close=True))
    _, entry_id = posted()  # one delivery to each endpoint
    unknown = drive(Delivery.objects.get(entry_id=entry_id, endpoint=first))
    waiting = Delivery.objects.get(entry_id=entry_id, endpoint=second)
    console = logged_in(administrator)

    def listed(**params) -> list:
        return [row.delivery.pk for row in console.get(PAGE, params).context["rows"]]

    assert set(listed()) == {unknown.pk, waiting.pk}
    assert listed(state="outcome_unknown") == [unknown.pk]
    assert listed(state="accepted") == [waiting.pk]
    assert listed(endpoint="second") == [waiting.pk]
    assert listed(state="succeeded") == []
    (row,) = console.get(PAGE, {"endpoint": "first"}).context["rows"]
    assert [a.attempt_id for a in row.attempts] == [
        a.attempt_id for a in DeliveryAttempt.objects.filter(delivery=unknown)
    ]


def test_send_test_shows_the_answer(administrator, receiver):  # noqa: F811
    endpoint_for(receiver, supports="lookup")

    page = logged_in(administrator).post(
        "/console/deliveries/endpoints/test", {"name": "hooks"}, follow=True
    ).content.decode()

    assert re.search(r"Send test to hooks: answered 200 in \d+ ms\.", page)
    assert "A lookup of an unknown id answered 404, as it should." in page
    (post,) = receiver.posts()
    assert post.verified and b'"type":"settle.test"' in post.body
    assert Delivery.objects.count() == 0
    assert AuditEvent.objects.filter(action="endpoint_send_test").count() == 1


def test_send_test_says_when_no_answer_came(administrator, receiver):  # noqa: F811
    endpoint_for(receiver)
    receiver.script.append(Behaviour(close=True))

    page = logged_in(administrator).post(
        "/console/deliveries/endpoints/test", {"name": "hooks"}, follow=True
    ).content.decode()

    assert re.search(r"Send test to hooks: gave no answer \(\w+\) in \d+ ms\.", page)


def test_the_dashboard_counts_unknown_outcomes_and_disabled_endpoints(
    administrator, receiver  # noqa: F811
):
    delivery = lost(receiver, endpoint_for(receiver))
    endpoint_for(receiver, name="old-crm")
    moderation.endpoint_disable(actor="op", name="old-crm", reason="retired")
    console = logged_in(administrator)

    page = console.get("/console/")

    rows = {label: (hour, day) for label, hour, day in page.context["counts"]}
    assert rows["Unknown delivery outcomes"] == (1, 1)
    html = page.content.decode()
    assert "<strong>1</strong> delivery with an unknown outcome waits" in html
    assert "<strong>1</strong> endpoint disabled" in html
    act(console, delivery, "mark-failed", reason="gone")
    html = console.get("/console/").content.decode()
    assert "<strong>0</strong> deliveries with an unknown outcome wait" in html


def test_the_dashboard_counts_unknown_outcomes_only_up_to_its_bound(
    administrator, receiver, monkeypatch  # noqa: F811
):
    # given: three lost deliveries, and the bound (10,000 in production) lowered to two,
    # the real counting path otherwise
    monkeypatch.setattr(selectors, "COUNT_BOUND", 2)
    endpoint = endpoint_for(receiver)
    for _ in range(3):
        lost(receiver, endpoint)

    # when
    page = logged_in(administrator).get("/console/")

    # then: "more than 2", in the counts and the waiting card alike; never a full count
    html = page.content.decode()
    assert "<strong>more than 2</strong> deliveries with an unknown outcome wait" in html
    rows = {label: (str(hour), str(day)) for label, hour, day in page.context["counts"]}
    assert rows["Unknown delivery outcomes"] == ("more than 2", "more than 2")
    monkeypatch.setattr(selectors, "COUNT_BOUND", 3)
    html = logged_in(administrator).get("/console/").content.decode()
    assert "<strong>3</strong> deliveries with an unknown outcome wait" in html


def test_moderators_see_the_inbox_but_no_actions(moderator, receiver):  # noqa: F811
    delivery = lost(receiver, endpoint_for(receiver))

    page = logged_in(moderator).get(PAGE)

    assert inbox_ids(page) == [str(delivery.pk)]
    html = page.content.decode()
    assert "administrators settle it" in html and ">Resend</button>" not in html
    assert "receiver-secret" not in html and "/hooks/settle" not in html
    response = logged_in(moderator).post(f"/console/deliveries/{delivery.pk}/resend")
    assert response.status_code == 403 and len(receiver.posts()) == 1


def test_the_inbox_takes_as_many_queries_for_many_deliveries_as_for_one(
    administrator, receiver, django_assert_max_num_queries  # noqa: F811
):
    endpoint = endpoint_for(receiver)
    lost(receiver, endpoint)
    console = logged_in(administrator)
    console.get(PAGE)
    with django_assert_max_num_queries(20) as one:
        console.get(PAGE)
    for _ in range(4):
        lost(receiver, endpoint)
    with django_assert_max_num_queries(len(one.captured_queries)):
        page = console.get(PAGE)
    assert len(page.context["inbox"]) == 5


def test_the_deliveries_page_says_when_an_accepted_delivery_is_due_again(
    administrator, receiver  # noqa: F811
):
    endpoint = endpoint_for(receiver, supports="lookup")
    receiver.script = [Behaviour(close=True)]
    receiver.lookup_status = 503
    _, entry_id = posted()
    delivery = delivery_of_entry(entry_id)
    sweep.delivery_run(delivery_id=delivery.pk)  # sent, no answer
    sweep.delivery_run(delivery_id=delivery.pk)  # looked up: 503, so due again
    delivery.refresh_from_db()
    assert delivery.state == "accepted" and delivery.endpoint == endpoint

    page = logged_in(administrator).get(PAGE).content.decode()

    row = page[page.index(f'id="listed-{delivery.pk}"'):]
    row = row[:row.index("</tr>")]
    assert "next attempt" in row
    assert delivery.next_attempt_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") in row


def delivery_of_entry(entry_id: int) -> Delivery:
    return Delivery.objects.get(entry_id=entry_id)
