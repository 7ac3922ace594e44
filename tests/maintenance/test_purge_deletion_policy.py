"""The `deletion` policy in force at each purge (SPEC 8.1, 8.2): a deleted entry's receipt
goes at the first purge after `deleted_at` plus the policy then in force, whether the
policy was shortened or lengthened after the delete, and no job (neither the deletion
purge nor the thread purge) takes it earlier. The forecast counts the same."""

import json
from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from board.models import Entry
from board.services import entry_delete
from maintenance.purges import purge_deletion_records, purge_expired_threads
from moderation import actions as moderation
from receipts.models import Receipt, Tombstone
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

DAY = timedelta(days=1)


def set_deletion(days: int) -> None:
    moderation.retention_set(actor="test", policy="deletion", seconds=days * 86400)


def expiry_day(moment: datetime) -> date:
    """A tombstone's day: the moment rounded up to a midnight UTC."""
    moment = moment.astimezone(UTC)
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.date() if moment == midnight else moment.date() + DAY


def a_thread_with_a_deleted_reply(agent, *, deleted_after: timedelta):
    """A question and a reply posted now; the reply deleted `deleted_after` later, under
    the default 30-day deletion policy. Returns (start, the reply's payload, question id)."""
    start = timezone.now()
    question_id = agent.post(question()).json()["id"]
    answered = reply(question_id)
    reply_id = agent.post(answered).json()["id"]
    entry_delete(entry_id=reply_id, now=start + deleted_after)
    return start, answered, question_id


def purge_json(*args: str) -> dict:
    out = StringIO()
    call_command("purge", "--json", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


# --- The deletion purge ------------------------------------------------------------------


def test_a_shortened_policy_purges_an_earlier_deletion_at_the_next_purge(agent):
    # given: a question deleted under the 30-day default, then the policy cut to a day
    start = timezone.now()
    asked = question()
    entry_id = agent.post(asked).json()["id"]
    entry_delete(entry_id=entry_id, now=start)
    stored = Receipt.objects.get(result_id=entry_id).receipt_expires_at
    set_deletion(1)

    # when: the next purge, two days on (long before the 30 days the delete reckoned with)
    result = purge_deletion_records(now=start + 2 * DAY, batch_size=100)

    # then: receipt and row gone, a `deleted` tombstone, which lasts no less than it
    # would have had the policy stayed as it was
    assert (result.counts["receipts"], result.counts["entries"]) == (1, 1)
    assert counts()["receipts"] == 0 and counts()["entries"] == 0
    tombstone = Tombstone.objects.get()
    assert tombstone.reason == Tombstone.Reason.DELETED
    assert tombstone.expires_at == expiry_day(stored + settings.SETTLE_TOMBSTONE_RETENTION)
    with time_machine.travel(start + 2 * DAY):
        retry = agent.post(asked)
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"


def test_a_lengthened_policy_keeps_an_earlier_deletion_until_the_new_term(agent):
    # given: a question deleted under the 30-day default, then the policy grown to 60 days
    start = timezone.now()
    entry_id = agent.post(question()).json()["id"]
    entry_delete(entry_id=entry_id, now=start)
    set_deletion(60)

    # when / then: kept a day before deleted_at + 60 days, gone at it
    kept = purge_deletion_records(now=start + 60 * DAY - timedelta(seconds=1), batch_size=100)
    assert kept.counts["receipts"] == 0 and counts()["receipts"] == 1
    gone = purge_deletion_records(now=start + 60 * DAY, batch_size=100)
    assert gone.counts["receipts"] == 1 and counts()["receipts"] == 0
    # the tombstone lasts the tombstone policy from when the receipt could first go
    tombstone = Tombstone.objects.get()
    assert tombstone.expires_at == expiry_day(
        start + 60 * DAY + settings.SETTLE_TOMBSTONE_RETENTION
    )


def test_the_policy_is_read_at_each_purge_both_ways(agent):
    # given: two deletions, ten days apart, under the 30-day default
    start = timezone.now()
    first = agent.post(question()).json()["id"]
    second = agent.post(question()).json()["id"]
    entry_delete(entry_id=first, now=start)
    entry_delete(entry_id=second, now=start + 10 * DAY)

    # when: shortened to 5 days, a purge on day 12 takes the first only
    set_deletion(5)
    assert purge_deletion_records(now=start + 12 * DAY, batch_size=100).counts["receipts"] == 1
    # and lengthened to 40 days, a purge on day 45 keeps the second (deleted on day 10)
    set_deletion(40)
    assert purge_deletion_records(now=start + 45 * DAY, batch_size=100).counts["receipts"] == 0

    # then: it goes on day 50
    assert purge_deletion_records(now=start + 50 * DAY, batch_size=100).counts["receipts"] == 1
    assert not Entry.objects.exists() and Tombstone.objects.count() == 2


# --- The thread purge --------------------------------------------------------------------


def test_deletions_not_yet_due_do_not_hold_up_the_threads_due_behind_them(agent):
    # given: two threads deleted at once (their receipts' expiry, kept as promised, comes
    # first) under a 60-day deletion policy, and two threads posted after them
    start = timezone.now()
    set_deletion(60)
    for _ in range(2):
        entry_delete(entry_id=agent.post(question()).json()["id"], now=start)
    with time_machine.travel(start + timedelta(seconds=1), tick=False):
        kept = [agent.post(question()).json()["id"] for _ in range(2)]

    # when: on day 31, a run with no time left does one batch of two
    first = purge_expired_threads(
        now=start + 31 * DAY, batch_size=2, time_budget=timedelta(0)
    )

    # then: that batch went to the two threads that were due
    assert first.counts["threads"] == 2
    assert not Entry.objects.filter(pk__in=kept).exists()
    assert Receipt.objects.filter(state="deleted").count() == 2


def test_an_expired_thread_keeps_a_deleted_reply_until_the_lengthened_term(agent):
    # given: a thread whose reply was deleted on day 10 (the delete reckoned 30 days: day
    # 40), then the deletion policy grown to 60 days (day 70)
    start, answered, _ = a_thread_with_a_deleted_reply(agent, deleted_after=10 * DAY)
    set_deletion(60)

    # when: a purge on day 45, with the question long expired
    threads = purge_expired_threads(now=start + 45 * DAY, batch_size=100)
    deletions = purge_deletion_records(now=start + 45 * DAY, batch_size=100)

    # then: the deleted reply's receipt is kept, and with it its thread
    assert threads.counts["threads"] == 0 and deletions.counts["receipts"] == 0
    assert counts()["receipts"] == 2 and counts()["entries"] == 2 and not Tombstone.objects.exists()

    # and on day 70 the thread goes as one unit, the reply's tombstone `deleted`
    threads = purge_expired_threads(now=start + 70 * DAY, batch_size=100)
    assert threads.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    reasons = sorted(Tombstone.objects.values_list("reason", flat=True))
    assert reasons == [Tombstone.Reason.EXPIRED, Tombstone.Reason.DELETED]


def test_an_expired_thread_takes_a_deleted_reply_at_the_next_purge_after_a_shortening(agent):
    # given: a thread whose reply was deleted on day 10 (the delete reckoned 30 days: day
    # 40), then the deletion policy cut to one day (day 11)
    start, _, _ = a_thread_with_a_deleted_reply(agent, deleted_after=10 * DAY)
    set_deletion(1)

    # when: the first purge after the question's expiry (day 30)
    result = purge_expired_threads(now=start + 31 * DAY, batch_size=100)

    # then: the whole thread goes now, not on day 40
    assert result.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert counts()["entries"] == 0 and counts()["receipts"] == 0


# --- The forecast ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("days", "purge_on", "removed"),
    [(1, 31, 2), (60, 45, 0), (60, 71, 2)],
    ids=["shortened", "lengthened-kept", "lengthened-gone"],
)
def test_the_forecast_counts_what_the_purge_then_removes(agent, days, purge_on, removed):
    # given: the thread of the tests above, and a changed policy
    start, _, _ = a_thread_with_a_deleted_reply(agent, deleted_after=10 * DAY)
    set_deletion(days)
    moment = start + purge_on * DAY

    # when: a dry run for that day, then the real purge on that day
    dry = purge_json("--dry-run", "--at", moment.isoformat())
    with time_machine.travel(moment, tick=False):
        real = purge_json()

    # then
    assert dry == real
    assert real["purge-expired-threads"]["removed"] == removed
    assert counts()["entries"] == 2 - removed
