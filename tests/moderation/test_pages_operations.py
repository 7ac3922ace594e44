"""The operations page for every state a looked-up `request_id` can be in (SPEC 7).

Data is made through the public API and the operator services; time moves by passing
`now` to the purges and with time-machine for the page itself (a session made before a
month-long jump would have expired, so each jump logs the operator in afresh).
"""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from maintenance.purges import purge_deletion_records, purge_expired_threads
from moderation import actions as moderation
from receipts.models import Receipt, Tombstone
from tests.conftest import new_request_id, question
from tests.moderation.conftest import logged_in

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]

MONTH = timedelta(days=31)


def look_up(client, request_id: str):
    response = client.get("/console/operations/", {"request_id": request_id})
    assert response.status_code == 200
    return response, response.content.decode()


def posted(agent) -> tuple[str, int]:
    payload = question()
    answer = agent.post(payload)
    assert answer.status_code == 201
    return payload["request_id"], answer.json()["id"]


def test_it_shows_a_succeeded_operation_with_its_public_entry(console, agent):
    request_id, entry_id = posted(agent)

    response, page = look_up(console, request_id)

    (item,) = response.context["found"]
    assert item.trace.receipt.state == Receipt.State.SUCCEEDED and item.trace.tombstone is None
    assert f"#{entry_id}</a> question, public" in page
    assert "expired" not in page


def test_it_shows_a_hidden_entrys_operation_as_succeeded_and_hidden(console, agent):
    request_id, entry_id = posted(agent)
    moderation.entry_hide(actor="op", entry_id=entry_id, reason="spam")

    response, page = look_up(console, request_id)

    (item,) = response.context["found"]
    assert item.trace.receipt.state == Receipt.State.SUCCEEDED
    assert f"#{entry_id}</a> question, hidden" in page


def test_it_shows_a_deleted_operation_with_when_it_was_deleted(console, agent):
    request_id, entry_id = posted(agent)
    moderation.entry_delete(actor="op", entry_id=entry_id, reason="abuse")

    response, page = look_up(console, request_id)

    (item,) = response.context["found"]
    assert item.trace.receipt.state == Receipt.State.DELETED
    assert "<th scope=\"row\">Deleted</th>" in page
    assert f"#{entry_id}</a> question, deleted" in page


def test_it_shows_an_expired_receipt_the_purge_has_not_reached(operator, agent):
    request_id, _ = posted(agent)
    receipt = Receipt.objects.get()

    with time_machine.travel(receipt.receipt_expires_at + timedelta(hours=1), tick=False):
        response, page = look_up(logged_in(operator), request_id)

    (item,) = response.context["found"]
    assert item.trace.receipt is not None and item.trace.tombstone is None
    assert "(expired: retries answer 410)" in page


def test_it_shows_an_expired_tombstone_with_its_expiry_day(operator, agent):
    # given: the thread purged once its receipt expired
    request_id, _ = posted(agent)
    later = timezone.now() + MONTH
    assert purge_expired_threads(now=later, batch_size=10).counts["tombstones"] == 1
    tombstone = Tombstone.objects.get()

    # when: the operator looks it up that day (this page once answered 500 here)
    with time_machine.travel(later, tick=False):
        response, page = look_up(logged_in(operator), request_id)

    # then: no receipt, the tombstone with the start of its expiry day in UTC
    (item,) = response.context["found"]
    assert item.trace.receipt is None and item.trace.tombstone == tombstone
    assert Receipt.objects.count() == 0
    day = datetime.combine(tombstone.expires_at, datetime.min.time(), tzinfo=UTC)
    assert "only a tombstone remains" in page
    assert "Tombstone: <strong>expired</strong>" in page
    assert f'<time datetime="{day.isoformat()}"' in page
    assert f"{tombstone.expires_at.isoformat()} 00:00 UTC" in page


def test_it_shows_a_deleted_tombstone(operator, agent):
    request_id, entry_id = posted(agent)
    start = timezone.now()
    moderation.entry_delete(actor="op", entry_id=entry_id, reason="abuse")
    later = start + MONTH
    assert purge_deletion_records(now=later, batch_size=10).counts["tombstones"] == 1

    with time_machine.travel(later, tick=False):
        response, page = look_up(logged_in(operator), request_id)

    (item,) = response.context["found"]
    assert item.trace.receipt is None
    assert item.trace.tombstone.reason == Tombstone.Reason.DELETED
    assert "Tombstone: <strong>deleted</strong>" in page
    assert Receipt.objects.count() == 0 and Tombstone.objects.count() == 1


def test_it_says_nothing_is_known_of_an_id_never_seen(console, agent):
    posted(agent)
    unknown = new_request_id()

    response, page = look_up(console, unknown)

    assert response.context["found"] == []
    assert f"Nothing is known of <span class=\"mono\">{unknown}</span>" in page


def test_it_says_nothing_is_known_once_the_tombstone_itself_expired(operator, agent):
    request_id, _ = posted(agent)
    later = timezone.now() + MONTH
    purge_expired_threads(now=later, batch_size=10)
    tombstone_day = Tombstone.objects.get().expires_at

    gone = datetime.combine(tombstone_day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=1)
    with time_machine.travel(gone, tick=False):
        response, page = look_up(logged_in(operator), request_id)

    # An attempt row is past its own retention by then only once purged; the page lists
    # the scope only for what it still holds.
    assert all(item.trace.tombstone is None for item in response.context["found"])
    assert "Tombstone:" not in page
