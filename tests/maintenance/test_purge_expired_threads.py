"""The thread purge, with time moved forward by passing `now` (and time-machine for the
HTTP calls an agent makes later)."""

from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.utils import timezone

from board.models import Entry
from maintenance.purges import purge_expired_threads, purge_tombstones
from receipts.models import Receipt, Tombstone
from receipts.services import Identity
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

MONTH = timedelta(days=31)


def purge_at(moment, batch_size=100, **kwargs):
    return purge_expired_threads(now=moment, batch_size=batch_size, **kwargs)


def post_thread(agent):
    asked = question()
    question_id = agent.post(asked).json()["id"]
    answered = reply(question_id)
    assert agent.post(answered).status_code == 201
    return asked, answered, question_id


def test_it_removes_an_expired_thread_with_its_receipts_and_leaves_tombstones(agent):
    # given
    asked, answered, _ = post_thread(agent)
    receipts_before = {r.request_id: r for r in Receipt.objects.all()}

    # when
    result = purge_at(timezone.now() + MONTH)

    # then
    assert result.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert result.complete
    assert counts()["entries"] == 0 and counts()["receipts"] == 0
    for receipt in receipts_before.values():
        tombstone = Tombstone.objects.get(
            key=Identity(receipt.scope, receipt.operation, receipt.request_id).key
        )
        assert tombstone.reason == Tombstone.Reason.EXPIRED
        # the exact expiry, rounded up to the next midnight UTC
        exact = receipt.receipt_expires_at + settings.SETTLE_TOMBSTONE_RETENTION
        assert tombstone.expires_at == exact.date() + timedelta(days=1)


def test_it_leaves_a_thread_that_has_not_expired(agent):
    post_thread(agent)
    before = counts()

    result = purge_at(timezone.now() + timedelta(days=29))

    assert result.counts["threads"] == 0
    assert counts() == before


def test_it_answers_a_retry_after_the_purge_with_410_expired_and_saves_nothing(agent):
    # given
    asked, answered, _ = post_thread(agent)
    purge_at(timezone.now() + MONTH)
    before = counts()

    # when
    answers = [agent.post(asked), agent.post(answered)]

    # then
    for answer in answers:
        assert answer.status_code == 410
        assert answer.json()["error"]["code"] == "expired"
    after = counts()
    assert (after["entries"], after["receipts"], after["tombstones"]) == (0, 0, 2)
    assert after["attempts"] == before["attempts"] + 2


def test_it_answers_410_expired_from_receipt_expiry_before_any_purge(agent):
    asked, _, _ = post_thread(agent)

    with time_machine.travel(timezone.now() + MONTH, tick=False):
        answer = agent.post(asked)
        operation = agent.get(f"/api/v1/operations/{asked['request_id']}").json()

    assert answer.status_code == 410
    assert answer.json()["error"]["code"] == "expired"
    assert operation["status"] == "expired"
    assert counts()["entries"] == 2


def test_get_operation_says_expired_until_the_tombstone_expires_then_404(agent):
    # given: purged a month on
    asked, _, _ = post_thread(agent)
    purge_at(timezone.now() + MONTH)
    path = f"/api/v1/operations/{asked['request_id']}"

    # then: the tombstone answers
    expired = agent.get(path)
    assert expired.status_code == 200
    assert expired.json()["status"] == "expired"
    assert expired.json()["result"] is None

    # when: the tombstone's own retention has passed and its purge ran
    later = timezone.now() + MONTH + settings.SETTLE_TOMBSTONE_RETENTION + timedelta(days=1)
    removed = purge_tombstones(now=later, batch_size=100)

    # then: nothing is known of the id any more
    assert removed.counts == {"tombstones": 2}
    assert counts()["tombstones"] == 0
    with time_machine.travel(later, tick=False):
        assert agent.get(path).status_code == 404
        assert agent.post(asked).status_code == 201


def test_a_tombstone_answers_until_the_midnight_after_its_exact_expiry(agent):
    asked, _, _ = post_thread(agent)
    purge_at(timezone.now() + MONTH)
    receipt_expiry = timezone.now() + settings.SETTLE_ENTRY_RETENTION
    exact = receipt_expiry + settings.SETTLE_TOMBSTONE_RETENTION
    day_after = (exact + timedelta(days=1)).replace(hour=0, minute=0, second=1)
    path = f"/api/v1/operations/{asked['request_id']}"

    with time_machine.travel(exact + timedelta(seconds=1), tick=False):
        assert agent.get(path).json()["status"] == "expired"
    with time_machine.travel(day_after, tick=False):
        assert agent.get(path).status_code == 404
    assert purge_tombstones(now=exact, batch_size=10).counts == {"tombstones": 0}
    assert purge_tombstones(now=day_after, batch_size=10).counts == {"tombstones": 2}


def test_it_keeps_a_thread_until_a_younger_reply_has_expired(agent):
    # given: a reply ten days younger than its question
    asked = question()
    question_id = agent.post(asked).json()["id"]
    start = timezone.now()
    with time_machine.travel(start + timedelta(days=10), tick=False):
        assert agent.post(reply(question_id)).status_code == 201

    # when: the question's receipt has expired, the reply's not yet
    kept = purge_at(start + MONTH)

    # then
    assert kept.counts["threads"] == 0
    assert counts()["entries"] == 2

    # when: both have expired
    gone = purge_at(start + MONTH + timedelta(days=10))

    # then
    assert gone.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert counts()["entries"] == 0


def test_a_question_whose_receipt_expired_takes_no_new_replies(agent):
    asked = question()
    question_id = agent.post(asked).json()["id"]

    with time_machine.travel(timezone.now() + MONTH, tick=False):
        before_purge = agent.post(reply(question_id))
    purge_at(timezone.now() + MONTH)
    after_purge = agent.post(reply(question_id))

    for answer in (before_purge, after_purge):
        assert answer.status_code == 422
        assert answer.json()["error"]["code"] == "parent_unavailable"
    assert counts()["receipts"] == 0


def test_it_works_in_batches_and_resumes_after_its_time_budget(agent):
    # given: five expired single-entry threads
    for _ in range(5):
        agent.post(question())

    # when: a run with no time left stops after its first batch
    first = purge_at(timezone.now() + MONTH, batch_size=2, time_budget=timedelta(0))
    second = purge_at(timezone.now() + MONTH, batch_size=2)

    # then: the next run finished the work
    assert (first.counts["threads"], first.complete, first.batches) == (2, False, 1)
    assert (second.counts["threads"], second.complete) == (3, True)
    assert counts()["entries"] == 0 and counts()["tombstones"] == 5


def test_a_dry_run_reports_and_removes_nothing(agent):
    post_thread(agent)
    before = counts()

    result = purge_at(timezone.now() + MONTH, dry_run=True)

    assert result.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert counts() == before


def test_a_deleted_question_with_a_reply_goes_with_its_thread(agent):
    # given: a question deleted while its reply lives on
    from board.services import entry_delete

    asked, answered, question_id = post_thread(agent)
    start = timezone.now()
    entry_delete(entry_id=question_id, now=start + timedelta(days=10))

    # when
    result = purge_at(start + MONTH)

    # then: the deletion receipt (30 days from the deletion) keeps the thread longer
    assert result.counts["threads"] == 0
    result = purge_at(start + MONTH + timedelta(days=10))
    assert result.counts["threads"] == 1
    assert Entry.objects.count() == 0
    reasons = sorted(Tombstone.objects.values_list("reason", flat=True))
    assert reasons == [Tombstone.Reason.EXPIRED, Tombstone.Reason.DELETED]
