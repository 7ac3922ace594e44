"""What the console's read-only pages show: dashboard, entries, operations, audit."""

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from board.models import Entry
from maintenance.activity import activity_roll_up
from moderation import actions as moderation
from moderation.models import AuditEvent
from receipts.models import Receipt
from tests.conftest import question, reply
from tests.seeding import entries_at

pytestmark = pytest.mark.django_db


def test_the_dashboard_counts_attempts_by_outcome(console, agent, anonymous, settings):
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 10_000
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 4
    first = question()
    agent.post(first)                                   # new
    agent.post(first)                                   # replayed
    agent.post({**first, "body": "changed"})            # conflict
    agent.post(question())                              # new (4th attempt of the hour)
    agent.post(question())                              # rate-limited (source)
    activity_roll_up(now=timezone.now())  # what beat runs every minute
    response = console.get("/console/")
    rows = {label: (hour, day) for label, hour, day in response.context["counts"]}
    assert rows == {
        "New": (2, 2),
        "Replayed": (1, 1),
        "Conflicts": (1, 1),
        "Rate-limited": (1, 1),
        "Unknown delivery outcomes": (0, 0),
    }
    assert b"<svg" in response.content and b"<rect" in response.content
    assert response.context["chart"].total == 2


def test_the_dashboard_shows_when_posting_is_paused(console):
    moderation.posting_pause(actor="someone", reason="database upgrade")
    page = console.get("/console/").content.decode()
    assert "Paused." in page and "database upgrade" in page


def test_the_entries_list_filters_and_searches(console, agent, roomy_limits):
    q1 = agent.post(question(title="Alpha question", body="about apples")).json()["id"]
    q2 = agent.post(question(title="Beta question", body="about bananas")).json()["id"]
    r1 = agent.post(reply(q1, body="an apple reply")).json()["id"]
    moderation.entry_hide(actor="op", entry_id=q2, reason="r")

    def ids(**params):
        return [entry.pk for entry, _ in console.get("/console/entries/", params).context["rows"]]

    assert ids() == [r1, q2, q1]
    assert ids(type="reply") == [r1]
    assert ids(visibility="hidden") == [q2]
    assert ids(visibility="public") == [r1, q1]
    assert ids(q="apple") == [r1, q1]
    # The actor filter takes an exact name: an index in the list's order serves it.
    assert ids(actor="helper-bot") == [r1, q2, q1]
    assert ids(actor="helper") == []
    today = timezone.now().date()
    assert ids(created_from=today.isoformat()) == [r1, q2, q1]
    assert ids(created_to=(today - timedelta(days=1)).isoformat()) == []


def test_the_entries_list_is_paginated(console, agent, roomy_limits):
    for _ in range(51):
        agent.post(question())
    first = console.get("/console/entries/")
    assert len(first.context["rows"]) == 50 and b'rel="next"' in first.content
    second = console.get("/console/entries/", {"after": first.context["page"].older})
    assert len(second.context["rows"]) == 1


def test_the_thread_view_shows_hidden_and_deleted_entries(console, agent, roomy_limits):
    q = agent.post(question(title="Thread title")).json()["id"]
    r = agent.post(reply(q, body="reply to delete")).json()["id"]
    moderation.entry_delete(actor="op", entry_id=r, reason="r")
    page = console.get(f"/console/entries/{r}/").content.decode()
    assert "Thread title" in page and f"#{r}" in page and "removed when it was deleted" in page


def test_looking_up_a_request_id_across_scopes(console, agent, anonymous, roomy_limits):
    payload = question()
    agent.post(payload)
    agent.post(payload)
    anonymous.post(payload)
    moderation.posting_pause(actor="op", reason="r")
    other = question()
    agent.post(other)  # refused while paused: no receipt, one attempt
    response = console.get("/console/operations/", {"request_id": payload["request_id"]})
    found = response.context["found"]
    assert sorted(item.caller for item in found) == ["agent", "anonymous"]
    mine = next(item for item in found if item.caller == "agent")
    assert [a.outcome for a in mine.trace.attempts] == ["created", "replayed"]
    assert mine.trace.receipt.first_route == "api" and mine.entry is not None
    page = response.content.decode()
    assert "Digests" in page and "replayed" in page
    paused = console.get("/console/operations/", {"request_id": other["request_id"]})
    (item,) = paused.context["found"]
    assert item.trace.receipt is None
    assert [(a.outcome, a.detail) for a in item.trace.attempts] == [("refused", "writes_disabled")]


def test_an_operation_shows_the_attempt_that_made_it_in_its_place_among_the_others(
    console, agent, roomy_limits
):
    # given: an attempt refused while paused, then the one that made the entry, then a retry
    payload = question()
    moderation.posting_pause(actor="op", reason="r")
    agent.post(payload)
    moderation.posting_resume(actor="op", reason="r")
    made = agent.post(payload)
    agent.post(payload)

    # when
    response = console.get("/console/operations/", {"request_id": payload["request_id"]})

    # then: the three, in the order they came, the one that made it as its receipt says
    (item,) = response.context["found"]
    assert [(a.outcome, a.route) for a in item.trace.attempts] == [
        ("refused", "api"), ("created", "api"), ("replayed", "api"),
    ]
    assert made.status_code == 201
    assert item.trace.attempts[1].created_at == item.trace.receipt.first_seen_at


def test_an_operation_shows_its_request_digest_and_each_fields_tag(console, agent):
    payload = question()
    agent.post(payload)

    page = console.get("/console/operations/", {"request_id": payload["request_id"]})

    packed = bytes(Receipt.objects.get().packed_digests)
    shown = page.content.decode()
    assert f"request (form 1)</th><td>{packed[1:17].hex()}<" in shown
    tags = [packed[at:at + 4].hex() for at in range(17, len(packed), 4)]
    assert [f"field {n} tag</th><td>{tag}<" in shown for n, tag in enumerate(tags, 1)] == [
        True
    ] * 6


def test_an_operation_never_retried_was_last_seen_when_first_seen(console, agent):
    payload = question()
    agent.post(payload)
    receipt = Receipt.objects.get()

    page = console.get("/console/operations/", {"request_id": payload["request_id"]})

    stamp = receipt.first_seen_at.strftime("%Y-%m-%d %H:%M:%S")
    last_seen = re.search(r"Last seen</th><td>(.*?)</td>", page.content.decode()).group(1)
    assert receipt.last_seen_at is None
    assert f'title="{stamp} UTC"' in last_seen


def test_looking_up_an_unknown_request_id(console):
    response = console.get("/console/operations/", {"request_id": str(uuid.uuid4())})
    assert b"Nothing is known" in response.content
    # The inbox is there, and empty: no delivery's outcome is unknown.
    assert b"Nothing to settle: no delivery's outcome is unknown." in response.content
    assert response.context["inbox"] == []


def test_looking_up_nonsense_says_so(console):
    response = console.get("/console/operations/", {"request_id": "not-a-uuid"})
    assert response.status_code == 200 and b"valid UUID" in response.content


def test_the_audit_log_is_newest_first_and_filters(console, operator):
    moderation.posting_pause(actor="alice", reason="one")
    moderation.posting_resume(actor="bob", reason="two")
    moderation.posting_pause(actor="alice", reason="three")
    page = console.get("/console/audit/")
    assert [e.reason for e in page.context["page"]] == ["three", "two", "one"]
    by_alice = console.get("/console/audit/", {"actor": "alice"}).context["page"]
    assert [e.reason for e in by_alice] == ["three", "one"]
    resumed = console.get("/console/audit/", {"action": "posting_resume"}).context["page"]
    assert [e.reason for e in resumed] == ["two"]
    assert AuditEvent.objects.count() == 3


def test_times_are_rendered_in_utc_with_utc_on_hover(console, agent, roomy_limits):
    agent.post(question())
    entry = Entry.objects.get()
    page = console.get("/console/entries/").content.decode()
    stamp = entry.created_at.strftime("%Y-%m-%d %H:%M:%S")
    assert f'title="{stamp} UTC"' in page and "/static/moderation/local-times.js" in page


def test_the_date_filter_takes_a_day_whose_ids_skip_across_its_midnights(console):
    # given: entries on three days, the ids skipping across each midnight (a purge, a
    # rolled-back post), and times equal within a day
    midnight = datetime(2026, 3, 2, tzinfo=UTC)
    entries_at(
        [10, 11, 500, 501, 502, 9000, 9001],
        [midnight - timedelta(hours=1), midnight - timedelta(microseconds=1), midnight,
         midnight + timedelta(hours=5), midnight + timedelta(hours=5),
         midnight + timedelta(days=1), midnight + timedelta(days=1, seconds=1)],
    )

    def ids(**params):
        return [entry.pk for entry, _ in console.get("/console/entries/", params).context["rows"]]

    day = midnight.date()
    assert ids(created_from=day, created_to=day) == [502, 501, 500]
    assert ids(created_from=day) == [9001, 9000, 502, 501, 500]
    assert ids(created_to=day - timedelta(days=1)) == [11, 10]
    assert ids(created_from=day + timedelta(days=2)) == []
