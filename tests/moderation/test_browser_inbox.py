"""An operator settles the unknown-outcome inbox in a real browser (issue 9): the
deliveries are made by the real engine against a real receiver on 127.0.0.1, and the
console's actions make their one-off requests to it from the live server."""

from datetime import timedelta

import pytest

from maintenance.deliveries.models import Delivery
from moderation.models import AuditEvent
from tests.chromium import ARTIFACTS
from tests.maintenance.conftest import (  # noqa: F401 (fixtures)
    delivery_settings,
    drive,
    endpoint_for,
    receiver,
)
from tests.maintenance.webhook_receiver import Behaviour
from tests.moderation.test_browser import log_in
from tests.moderation.test_pages_inbox import posted

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def lost(receiver, delivery: Delivery) -> Delivery:  # noqa: F811
    receiver.script.append(Behaviour(close=True))
    delivery = drive(delivery)
    assert delivery.state == "outcome_unknown"
    return delivery


def test_an_operator_reconciles_marks_and_resends_from_the_inbox(
    browser_page, operator, receiver, settings  # noqa: F811
):
    # given: three deliveries whose outcome is unknown, made the way production makes them
    settings.SETTLE_DELIVERY_DEADLINE = timedelta(seconds=30)  # lookups stop before a retry
    ledger = endpoint_for(receiver, name="ledger", supports="lookup")
    crm = endpoint_for(receiver, name="crm")
    receiver.lookup_status = 503  # every lookup fails until the deadline
    _, first = posted()
    to_reconcile = lost(receiver, Delivery.objects.get(entry_id=first, endpoint=ledger))
    to_mark = lost(receiver, Delivery.objects.get(entry_id=first, endpoint=crm))
    _, second = posted()
    to_resend = lost(receiver, Delivery.objects.get(entry_id=second, endpoint=crm))
    assert drive(Delivery.objects.get(entry_id=second, endpoint=ledger)).state == "succeeded"
    receiver.lookup_status = None  # the receiver now answers lookups truly

    # when: the operator opens the inbox
    log_in(browser_page)
    browser_page.get_by_role("link", name="Deliveries").click()
    inbox = browser_page.locator("section#inbox")
    for delivery in (to_reconcile, to_mark, to_resend):
        inbox.locator(f"#delivery-{delivery.pk}").wait_for()
    assert browser_page.get_by_role("heading", name="Unknown outcomes (3)").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    browser_page.screenshot(path=str(ARTIFACTS / "deliveries-inbox-of-three.png"), full_page=True)

    # reconciles one
    inbox.locator(f"#delivery-{to_reconcile.pk}").get_by_role("button", name="Reconcile").click()
    browser_page.get_by_text(f"Reconciled: delivery {to_reconcile.pk} is succeeded.").wait_for()

    # marks another failed, with a reason
    row = inbox.locator(f"#delivery-{to_mark.pk}")
    row.get_by_label(f"Reason for delivery {to_mark.pk}").fill("CRM says it never arrived")
    row.get_by_role("button", name="Mark failed").click()
    browser_page.get_by_text(f"Marked: delivery {to_mark.pk} is failed.").wait_for()

    # resends a third
    inbox.locator(f"#delivery-{to_resend.pk}").get_by_role("button", name="Resend").click()
    browser_page.get_by_text(f"Resent: delivery {to_resend.pk} is succeeded.").wait_for()

    # then: each has left the inbox
    assert browser_page.get_by_text("Nothing to settle: no delivery's outcome").is_visible()
    states = dict(Delivery.objects.values_list("pk", "state"))
    assert (states[to_reconcile.pk], states[to_mark.pk], states[to_resend.pk]) == (
        "succeeded", "failed", "succeeded"
    )
    # and appears in the audit log, newest first
    browser_page.get_by_role("link", name="Audit").click()
    table = browser_page.locator("table tbody")
    expected = [
        (to_resend, "delivery_resend", ""),
        (to_mark, "delivery_mark_failed", "CRM says it never arrived"),
        (to_reconcile, "delivery_reconcile", ""),
    ]
    for position, (delivery, action, reason) in enumerate(expected):
        cells = table.locator("tr").nth(position).locator("td")
        assert cells.nth(2).inner_text() == action
        assert str(delivery.pk) in cells.nth(3).inner_text()
        assert cells.nth(4).inner_text() == reason
    events = AuditEvent.objects.filter(action__startswith="delivery_").order_by("id")
    assert [(e.action, e.target_ids) for e in events] == [
        (action, [str(delivery.pk)]) for delivery, action, _ in reversed(expected)
    ]
