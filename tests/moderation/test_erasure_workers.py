"""Erasure across processes (SPEC 8.4), at the issue's size, 10,000 entries: posts of
another principal to a live server go on, all `201`, while an erase runs; and a real
Celery worker killed with SIGKILL part-way, then restarted, finishes the erasure with
every entry deleted once and the counts right. On SQLite and PostgreSQL.

The 10,000 entries are seeded set-wise (tests/seeding.py: the write path's own
functions, one bulk insert a table): posting them one by one would take one to two
minutes before each test.
"""

import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command, load_command_class
from django.db import connection

from board.models import Entry
from moderation import erasure
from moderation.models import AuditEvent, Erasure
from receipts.models import Receipt
from tests.celery_worker import CELERY, ROOT, WORKER_SETTINGS, test_database_url, wait_for
from tests.conftest import issue_agent, question, reply
from tests.e2e.conftest import gunicorn  # noqa: F401  (the live server fixture)
from tests.seeding import entries_seed

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

ENTRIES = 10_000
QUESTIONS, REPLIES = 1_000, 9_000  # a question, then nine replies under it


def _spammer(count: int = ENTRIES):
    """The principal to erase, with `count` live entries and their receipts."""
    spammer = issue_agent("spammer")
    return spammer, entries_seed(token=spammer.token, count=count)


class Poster(threading.Thread):
    """Another agent posting replies to the live server, one after another, recording
    each answer's status as it comes (no retry: a `503` would show)."""

    def __init__(self, base: str, token: str, thread_id: int):
        super().__init__(daemon=True)
        self.base, self.token, self.thread_id = base, token, thread_id
        self.stop = threading.Event()
        self.answers: list[tuple[float, int]] = []

    def run(self) -> None:
        while not self.stop.is_set():
            request = urllib.request.Request(
                f"{self.base}/api/v1/entries", method="POST",
                data=json.dumps(reply(self.thread_id)).encode(),
                headers={"Content-Type": "application/json",
                         "Authorization": f"Bearer {self.token}"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    status = answer.status
            except urllib.error.HTTPError as error:
                status = error.code
            except OSError:
                status = 0  # no answer at all
            self.answers.append((time.monotonic(), status))

    def during(self, began: float, ended: float) -> int:
        return sum(1 for moment, _ in self.answers if began <= moment <= ended)


LIVE_LIMITS = {"SETTLE_SOURCE_HOURLY_LIMIT": "100000", "SETTLE_OVERALL_HOURLY_LIMIT": "100000"}


@pytest.mark.parametrize("gunicorn", [LIVE_LIMITS], indirect=True)
def test_other_principals_posts_are_answered_201_while_an_erase_runs(gunicorn):  # noqa: F811
    # given: 10,000 entries of the spammer, and another agent answering in a thread of
    # its own on the live server
    spammer, seeded = _spammer()
    researcher = issue_agent("researcher")
    thread = researcher.post(question()).json()["id"]
    poster = Poster(gunicorn, researcher.token, thread)
    poster.start()
    assert wait_for(lambda: len(poster.answers) >= 3, seconds=30), poster.answers

    # when: the erase, as an operator runs it
    out = StringIO()
    began = time.monotonic()
    try:
        call_command("erase", "spammer", "--reason", "spam flood", stdout=out)
        ended = time.monotonic()
        time.sleep(0.3)
    finally:
        poster.stop.set()
        poster.join(timeout=60)

    # then: every post answered 201, some of them while the erase ran
    statuses = [status for _, status in poster.answers]
    assert set(statuses) == {201}, sorted(set(statuses))
    assert poster.during(began, ended) > 0
    assert out.getvalue().strip() == (
        f"erased {ENTRIES} entries ({QUESTIONS} questions, {REPLIES} replies)"
    )
    # and every entry of the spammer is deleted, its receipt `deleted`, the others' live
    assert not Entry.objects.filter(principal__name="spammer", deleted_at__isnull=True).exists()
    assert Receipt.objects.filter(state="deleted").count() == ENTRIES
    assert Entry.objects.filter(principal__name="researcher", deleted_at__isnull=True).count() == (
        1 + len(statuses)
    )
    finished = Erasure.objects.get()
    assert (finished.total, finished.done, finished.questions, finished.replies) == (
        ENTRIES, ENTRIES, QUESTIONS, REPLIES,
    )
    # and a retry of an erased post answers `410 deleted`, over the same live server
    retry = spammer.post(seeded.payloads[seeded.reply_ids[-1]])
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"


def test_a_second_erase_while_one_runs_waits_for_it_and_reports_its_counts():
    # given: an erasure of 1,000 entries running in another thread (the console's task),
    # one entry a batch, so that it is still running when the command starts: in larger
    # batches, on a busy machine, it could end between the check below and the command
    # (the command's module is loaded first for the same reason)
    load_command_class("moderation", "erase")
    _spammer(1_000)
    started, _ = erasure.erasure_start(actor="admin", name="spammer", reason="spam")
    first: list[Erasure] = []

    def run_first() -> None:
        try:
            first.append(erasure.erasure_run(erasure_id=started.pk, batch_size=1))
        finally:
            connection.close()

    runner = threading.Thread(target=run_first)
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not Erasure.objects.get().done:
            time.sleep(0.01)
        assert 0 < Erasure.objects.get().done < 1_000

        # when: an operator runs the command for the same principal meanwhile
        out = StringIO()
        call_command("erase", "spammer", "--reason", "spam again", stdout=out)
    finally:
        runner.join(timeout=120)

    # then: it joined the running erasure and printed the whole erasure's counts
    assert out.getvalue().strip() == "erased 1000 entries (100 questions, 900 replies)"
    assert first and first[0].state == "finished" and first[0].done == 1_000
    assert Erasure.objects.count() == 1
    assert AuditEvent.objects.filter(action="erase_start").count() == 1
    assert AuditEvent.objects.filter(action="erase_end").count() == 1
    assert Entry.objects.filter(principal__name="spammer", deleted_at__isnull=False).count() == (
        1_000
    )


def _worker(tmp_path, name: str) -> subprocess.Popen:
    environment = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "SETTLE_BROKER_DIR": str(settings.BROKER_DIR),
        "SETTLE_ERASE_STALE_AFTER": "1s",
        "DEBUG": "true",
        "DJANGO_SETTINGS_MODULE": WORKER_SETTINGS,
    }
    log = open(tmp_path / f"{name}.log", "w")
    return subprocess.Popen(
        [str(CELERY), "-A", "board", "worker", "--loglevel", "INFO", "--concurrency", "1"],
        cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )


def _stop(worker: subprocess.Popen) -> None:
    try:
        os.killpg(worker.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    worker.wait()


def test_a_worker_killed_halfway_and_restarted_finishes_the_erasure_exactly(tmp_path):
    from board.celery import app
    from moderation.tasks import erasure_run, erasures_resume

    # given: 10,000 entries and an erasure started as the console starts it
    _spammer()
    started, _ = erasure.erasure_start(actor="admin", name="spammer", reason="spam")
    app.control.purge()
    first = _worker(tmp_path, "first")
    try:
        erasure_run.delay(started.pk, 50)
        # when: the worker is killed with SIGKILL once it is part-way through (polled
        # often: the whole erase takes seconds)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and Erasure.objects.get().done < 1_000:
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    finally:
        _stop(first)
    killed = Erasure.objects.get()
    assert killed.done >= 1_000, (tmp_path / "first.log").read_text()[-3000:]
    assert killed.state == "running" and killed.done < ENTRIES
    # what the record counts is exactly what is deleted: the killed batch rolled back whole
    assert Entry.objects.filter(principal__name="spammer", deleted_at__isnull=False).count() == (
        killed.done
    )

    # and: a new worker starts and the resume job (beat's, sent here) finds it stale
    second = _worker(tmp_path, "second")
    try:
        time.sleep(1.5)  # past SETTLE_ERASE_STALE_AFTER
        erasures_resume.delay()
        finished = wait_for(
            lambda: Erasure.objects.filter(state="finished").first(), seconds=300
        )
    finally:
        _stop(second)

    # then: every entry deleted once, counts right, one end event
    assert finished, (tmp_path / "second.log").read_text()[-3000:]
    assert (finished.total, finished.done) == (ENTRIES, ENTRIES)
    assert (finished.questions, finished.replies) == (QUESTIONS, REPLIES)
    assert not Entry.objects.filter(principal__name="spammer", deleted_at__isnull=True).exists()
    assert Receipt.objects.filter(state="deleted").count() == ENTRIES
    assert AuditEvent.objects.filter(action="erase_end").count() == 1
    assert AuditEvent.objects.get(action="erase_end").details["done"] == ENTRIES
