"""Erasure across processes (SPEC 8.4): posts of other principals go on while an erase
runs (PostgreSQL), and a real Celery worker killed with SIGKILL halfway, then restarted,
finishes the erasure with every entry deleted once and the counts right."""

import os
import signal
import subprocess
import threading
import time
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from board import services as board
from board.models import Entry
from moderation import erasure
from moderation.models import AuditEvent, Erasure
from tests.celery_worker import CELERY, ROOT, test_database_url, wait_for
from tests.conftest import Agent, issue_agent, question, reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]


def _entries_of(name: str, n: int) -> None:
    """`n` entries of principal `name` through the write path's service (a question every
    ten, replies under it)."""
    _, token = board.token_issue(name=name)
    parent = None
    for i in range(n):
        payload = question() if i % 10 == 0 else reply(parent)
        board.entry_post(token=token, address="127.0.0.1", body=payload, route="api")
        if i % 10 == 0:
            parent = Entry.objects.latest("id").pk


@pytest.mark.postgres
def test_other_principals_posts_are_answered_201_while_an_erase_runs(settings):
    # given: 2,000 entries of the spammer, and another agent answering in a thread
    settings.SETTLE_SOURCE_HOURLY_LIMIT = settings.SETTLE_OVERALL_HOURLY_LIMIT = 100_000
    _entries_of("spammer", 2000)
    poster: Agent = issue_agent("researcher")
    thread = poster.post(question()).json()["id"]
    statuses: list[int] = []
    stop = threading.Event()

    def keep_posting() -> None:
        try:
            while not stop.is_set():
                statuses.append(poster.post(reply(thread)).status_code)
        finally:
            connection.close()

    posting = threading.Thread(target=keep_posting)
    posting.start()
    try:
        # when
        out = StringIO()
        call_command("erase", "spammer", "--reason", "spam flood", stdout=out)
    finally:
        stop.set()
        posting.join(timeout=30)

    # then
    assert out.getvalue().strip() == "erased 2000 entries (200 questions, 1800 replies)"
    assert statuses and set(statuses) == {201}, sorted(set(statuses))
    assert not Entry.objects.filter(principal__name="spammer", deleted_at__isnull=True).exists()
    assert Entry.objects.filter(principal__name="researcher", deleted_at__isnull=True).count() == (
        1 + len(statuses)
    )


def _worker(tmp_path, name: str) -> subprocess.Popen:
    environment = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "SETTLE_BROKER_DIR": str(settings.BROKER_DIR),
        "SETTLE_ERASE_STALE_AFTER": "1s",
        "DEBUG": "true",
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

    # given: 600 entries and an erasure started as the console starts it, small batches
    _entries_of("spammer", 600)
    started, _ = erasure.erasure_start(actor="admin", name="spammer", reason="spam")
    app.control.purge()
    first = _worker(tmp_path, "first")
    try:
        erasure_run.delay(started.pk, 5)
        # when: the worker is killed with SIGKILL once it is part-way through
        halfway = wait_for(
            lambda: 150 <= Erasure.objects.get().done < 600, seconds=120
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    finally:
        _stop(first)
    assert halfway, (tmp_path / "first.log").read_text()[-3000:]
    killed = Erasure.objects.get()
    assert killed.state == "running" and killed.done < 600

    # and: a new worker starts and the resume job (beat's, sent here) finds it stale
    second = _worker(tmp_path, "second")
    try:
        time.sleep(1.5)  # past SETTLE_ERASE_STALE_AFTER
        erasures_resume.delay()
        finished = wait_for(
            lambda: Erasure.objects.filter(state="finished").first(), seconds=180
        )
    finally:
        _stop(second)

    # then: every entry deleted once, counts right, one end event
    assert finished, (tmp_path / "second.log").read_text()[-3000:]
    assert (finished.total, finished.done) == (600, 600)
    assert (finished.questions, finished.replies) == (60, 540)
    assert not Entry.objects.filter(principal__name="spammer", deleted_at__isnull=True).exists()
    assert AuditEvent.objects.filter(action="erase_end").count() == 1
    assert AuditEvent.objects.get(action="erase_end").details["done"] == 600
