"""The races retention exists for: a retry meeting the purge of its own receipt, and two
purge runs started together. Real threads, real transactions."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.exceptions import BoardError, error_status
from board.models import Entry
from maintenance.purges import purge_expired_threads
from receipts.exceptions import ReceiptError
from receipts.models import Receipt, Tombstone
from tests.conftest import new_posts_held, question, reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

RETENTION = timedelta(days=30)


def post(token, payload, now):
    return board.entry_post(
        token=token, address="127.0.0.1", fields=entry_fields_read(payload), route="api", now=now
    )


def answer_of(token, payload, now) -> str:
    try:
        posted = post(token, payload, now)
    except (ReceiptError, BoardError) as refusal:
        return f"{error_status(refusal)} {refusal.code}"
    return "200" if posted.replayed else "201"


class Pair:
    """Two worker threads that start each task at the same instant (a barrier)."""

    def __init__(self):
        self.pool = ThreadPoolExecutor(2)
        self.barrier = threading.Barrier(2)

    def together(self, first, second):
        def gated(work):
            self.barrier.wait()
            return work()

        futures = [self.pool.submit(gated, first), self.pool.submit(gated, second)]
        return [future.result() for future in futures]

    def close(self):
        # Each thread opened its own connection; close them so the test database can go.
        self.together(connections.close_all, connections.close_all)
        self.pool.shutdown()


@pytest.mark.postgres
def test_a_retry_racing_the_purge_of_its_receipt_answers_410_expired():
    # given: 200 questions whose receipts expire one second apart
    _, token = board.token_issue(name="racer")
    start = timezone.now() - RETENTION - timedelta(days=1)
    payloads = [question() for _ in range(200)]
    for i, payload in enumerate(payloads):
        post(token, payload, start + timedelta(seconds=i))
    last_id = Entry.objects.order_by("-id").values_list("id", flat=True).first()

    # when: each is retried at the very moment the purge removes it
    pair = Pair()
    answers, purged = [], 0
    try:
        for i, payload in enumerate(payloads):
            moment = start + timedelta(seconds=i) + RETENTION + timedelta(milliseconds=500)
            answer, result = pair.together(
                lambda p=payload, m=moment: answer_of(token, p, m),
                lambda m=moment: purge_expired_threads(now=m, batch_size=10),
            )
            answers.append(answer)
            purged += result.counts["threads"]
    finally:
        pair.close()

    # then: every retry was refused as expired, and nothing was saved twice
    assert set(answers) == {"410 expired"}
    assert not Entry.objects.filter(id__gt=last_id).exists()
    assert Entry.objects.count() + purged == 200
    # whatever the purge skipped (a retry held the receipt) goes on the next run
    purge_expired_threads(now=timezone.now(), batch_size=500)
    assert Entry.objects.count() == 0 and Receipt.objects.count() == 0
    assert Tombstone.objects.count() == 200


def test_two_purge_runs_started_together_split_the_work():
    # given: 120 expired threads, 40 of them with a reply
    _, token = board.token_issue(name="poster")
    start = timezone.now() - RETENTION - timedelta(days=1)
    for i in range(120):
        question_id = post(token, question(), start).entry.pk
        if i % 3 == 0:
            post(token, reply(question_id), start)
    receipts = Receipt.objects.count()
    assert receipts == 160

    # when
    pair = Pair()
    try:
        first, second = pair.together(
            lambda: purge_expired_threads(now=timezone.now(), batch_size=15),
            lambda: purge_expired_threads(now=timezone.now(), batch_size=15),
        )
    finally:
        pair.close()

    # then: the counts add up, one tombstone per identity, nothing left over
    totals = {key: first.counts[key] + second.counts[key] for key in first.counts}
    assert totals == {"threads": 120, "entries": 160, "receipts": 160, "tombstones": 160}
    assert Tombstone.objects.count() == 160
    assert Entry.objects.count() == 0 and Receipt.objects.count() == 0


@pytest.mark.postgres
def test_a_thread_whose_receipt_another_transaction_holds_is_left_for_the_next_run():
    # given: an expired thread whose reply's receipt a retry is holding right now
    from django.db import transaction

    _, token = board.token_issue(name="holder")
    start = timezone.now() - RETENTION - timedelta(days=1)
    question_id = post(token, question(), start).entry.pk
    reply_id = post(token, reply(question_id), start).entry.pk
    holding, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                Receipt.objects.select_for_update().get(result_id=reply_id)
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)

    # when: the purge meets the held receipt, it skips the thread without waiting
    try:
        skipped = purge_expired_threads(now=timezone.now(), batch_size=10)
    finally:
        release.set()
        holder.join()
    done = purge_expired_threads(now=timezone.now(), batch_size=10)

    # then
    assert skipped.counts["threads"] == 0
    assert done.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert Entry.objects.count() == 0 and Tombstone.objects.count() == 2


@pytest.mark.postgres
def test_a_reply_posted_as_its_question_expires_is_never_an_unknown_outcome():
    # given: a question whose receipt expires at `expiry`, and a reply accepted a second
    # before that, paused inside its transaction after its entry was written
    _, token = board.token_issue(name="replier")
    start = timezone.now() - RETENTION - timedelta(days=1)
    question_id = post(token, question(), start).entry.pk
    expiry = start + RETENTION
    answers = []

    def reply_now():
        try:
            answers.append(answer_of(token, reply(question_id), expiry - timedelta(seconds=1)))
        finally:
            connections.close_all()

    replier = threading.Thread(target=reply_now)
    with new_posts_held(thread=replier) as held:
        replier.start()
        assert held()

        # when: the purge runs a second after the question's expiry, the reply in flight
        pool = ThreadPoolExecutor(1)
        purge = pool.submit(
            lambda: (
                purge_expired_threads(now=expiry + timedelta(seconds=1), batch_size=10),
                connections.close_all(),
            )[0]
        )
        try:
            result = purge.result(timeout=3)
        except TimeoutError:
            result = None  # the purge waited for the reply: also acceptable
    replier.join()
    if result is None:
        result = purge.result(timeout=10)
    pool.shutdown()

    # then: the reply is saved with its thread kept, or refused; never "503 unknown"
    assert answers[0] in {"201", "422 parent_unavailable"}, answers
    if answers[0] == "201":
        assert result.counts["threads"] == 0
        assert Entry.objects.filter(pk=question_id).exists()
    else:
        assert Entry.objects.count() == 0
