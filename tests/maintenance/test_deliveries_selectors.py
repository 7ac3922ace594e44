"""What the console reads: the inbox, counts by state, endpoints with their success rate."""

import pytest
from django.utils import timezone

from maintenance.deliveries import endpoints, rates, selectors
from tests.maintenance.conftest import delivery_of, drive, endpoint_for, post_entry
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def test_the_inbox_lists_unknown_outcomes_oldest_first_with_their_evidence(receiver):
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(hang=True), Behaviour(status=200), Behaviour(close=True)]
    first = drive(delivery_of(post_entry()))
    drive(delivery_of(post_entry()))
    third = drive(delivery_of(post_entry()))

    inbox = list(selectors.deliveries_unknown())

    assert [d.pk for d in inbox] == [first.pk, third.pk]
    assert inbox[0].endpoint.name == "hooks"
    assert [a.error for a in inbox[0].attempt_log.all()] == ["timeout"]
    assert selectors.deliveries_unknown_count() == 2
    counts = selectors.deliveries_count_by_state()
    assert counts["outcome_unknown"] == 2 and counts["succeeded"] == 1
    assert counts["cancelled"] == 0 and set(counts) >= {"accepted", "running"}


def test_endpoints_overview_shows_success_rate_and_why_disabled(receiver):
    endpoint = endpoint_for(receiver)
    receiver.script = [Behaviour(status=500)]
    drive(delivery_of(post_entry()))  # 500, then 200
    endpoints.endpoint_disable(name=endpoint.name, reason="receiver migrating")
    rates.endpoint_rates_roll_up(now=timezone.now())  # what beat runs every minute

    [overview] = selectors.endpoints_overview()

    assert (overview.recent_attempts, overview.recent_successes) == (2, 1)
    assert overview.success_rate == 0.5
    assert overview.disabled_reason == "receiver migrating" and overview.disabled_at
    assert selectors.endpoints_disabled_count() == 1
    assert [d.state for d in selectors.deliveries_filtered(endpoint="hooks")] == ["succeeded"]
    assert list(selectors.deliveries_filtered(state="failed")) == []
