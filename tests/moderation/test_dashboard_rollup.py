"""The dashboard reads a per-minute rollup that a beat job keeps (maintenance/activity.py),
never the entries or attempts themselves (SPEC 11.7: no page grows with the board)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board.models import Entry
from maintenance.activity import LATE_COMMIT, activity_roll_up, minute_of
from maintenance.models import ActivityMinute
from receipts.models import Attempt
from tests.conftest import question
from tests.moderation.conftest import logged_in
from tests.moderation.test_scaling import grow_board, queries_for
from tests.seeding import entries_at

pytestmark = pytest.mark.django_db


def counts_on(page) -> dict:
    return {label: (hour, day) for label, hour, day in page.context["counts"]}


def test_it_counts_posts_once_the_rollup_job_has_run(console, agent, roomy_limits):
    # given: two new posts, a replay and a conflict
    first = question()
    agent.post(first)
    agent.post(first)
    agent.post({**first, "body": "changed"})
    agent.post(question())

    # when the page is opened before the job's first run: nothing yet, and it says why
    before = console.get("/console/")
    assert counts_on(before)["New"] == (0, 0)
    assert "not yet made" in before.content.decode()

    # when the job has run
    activity_roll_up(now=timezone.now())
    page = console.get("/console/")

    # then
    rows = counts_on(page)
    assert rows["New"] == (2, 2) and rows["Replayed"] == (1, 1) and rows["Conflicts"] == (1, 1)
    assert page.context["chart"].total == 2
    assert page.context["chart"].bars[-1].label.endswith(": 2 posts")
    assert "not yet made" not in page.content.decode()


def test_it_counts_an_older_post_in_the_day_and_its_own_hour_only(console, agent):
    # given: a post made three hours ago (its rows moved back in time)
    agent.post(question())
    earlier = timezone.now() - timedelta(hours=3)
    Entry.objects.update(created_at=earlier)
    Attempt.objects.update(created_at=earlier)

    # when
    activity_roll_up(now=timezone.now())
    page = console.get("/console/")

    # then
    assert counts_on(page)["New"] == (0, 1)
    bars = page.context["chart"].bars
    assert [bar.label.endswith(": 1 post") for bar in bars].index(True) == len(bars) - 4


def test_it_counts_a_post_that_committed_after_the_last_run(console, agent):
    # given: a run, then a post stamped a minute before that run (its transaction began
    # before and committed after)
    now = timezone.now()
    activity_roll_up(now=now)
    agent.post(question())
    Entry.objects.update(created_at=now - timedelta(minutes=1))
    Attempt.objects.update(created_at=now - timedelta(minutes=1))

    # when the next run comes
    activity_roll_up(now=now + timedelta(minutes=1))

    # then
    assert sum(ActivityMinute.objects.values_list("posts", flat=True)) == 1
    assert counts_on(console.get("/console/"))["New"] == (1, 1)


def test_it_counts_a_post_whose_id_came_after_slower_posts_stamped_before_the_window():
    # given: a run; then a post stamped just inside the next run's minutes, ten slower
    # requests stamped two minutes before them that took their ids after it, and ten more
    # inside (ids and creation times disagree by two minutes, within the slack)
    now = timezone.now()
    activity_roll_up(now=now)
    since = minute_of(now - LATE_COMMIT)
    entries_at(
        list(range(100, 121)),
        [since + timedelta(seconds=1)]
        + [since - timedelta(minutes=2)] * 10
        + [since + timedelta(minutes=2)] * 10,
    )

    # when the next run comes
    rolled = activity_roll_up(now=now + timedelta(minutes=1))

    # then: the eleven inside, the first among them
    assert rolled.since == since
    assert sum(ActivityMinute.objects.values_list("posts", flat=True)) == 11


def test_it_keeps_two_days_of_minutes_and_the_same_counts_when_run_twice(agent):
    agent.post(question())
    now = timezone.now()

    first = activity_roll_up(now=now)
    activity_roll_up(now=now)

    assert first.minutes == 48 * 60 + 1
    assert ActivityMinute.objects.count() == 48 * 60 + 1
    assert sum(ActivityMinute.objects.values_list("posts", flat=True)) == 1
    later = now + timedelta(hours=1)
    activity_roll_up(now=later)
    oldest = minute_of(later - timedelta(hours=48))
    assert not ActivityMinute.objects.filter(minute__lt=oldest).exists()


def test_it_reads_neither_entries_nor_attempts_nor_more_queries_as_the_board_grows(moderator):
    console_client = logged_in(moderator)
    grow_board(100)
    activity_roll_up(now=timezone.now())
    queries_for(console_client, "/console/")  # warm caches once

    with CaptureQueriesContext(connection) as captured:
        assert console_client.get("/console/").status_code == 200
    tables = " ".join(query["sql"] for query in captured)
    assert Entry._meta.db_table not in tables
    assert Attempt._meta.db_table not in tables

    small = len(captured)
    grow_board(3_000)
    activity_roll_up(now=timezone.now())
    assert queries_for(console_client, "/console/") == small
