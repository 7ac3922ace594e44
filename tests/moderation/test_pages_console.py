"""What a newcomer tripped on in the console (issue 10): the entries page's reason feeds
both actions, the retention page says only true things, the audit log reads as words,
and the site has an icon. Layout at phone width is in test_browser_console.py."""

import re

import pytest
from django.contrib.staticfiles import finders

from board.models import Entry
from maintenance import purges as maintenance
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.conftest import question

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]


def posted(agent) -> int:
    return agent.post(question()).json()["id"]


def entry_form(page: str, entry_id: int) -> str:
    """The one form on the entries page that holds entry `entry_id`'s reason field."""
    forms = re.findall(r"<form .*?</form>", page, flags=re.S)
    (form,) = [f for f in forms if f'id="reason-{entry_id}"' in f]
    return form


def test_the_reason_beside_an_entry_feeds_hide_and_delete(console, agent):
    entry_id = posted(agent)

    form = entry_form(console.get("/console/entries/").content.decode(), entry_id)

    assert f'action="/console/entries/{entry_id}/hide"' in form
    assert re.search(
        rf'<button[^>]*formaction="/console/entries/{entry_id}/delete"[^>]*>Delete</button>', form
    )
    assert ">Hide</button>" in form


def test_delete_beside_an_entry_carries_the_reason_into_the_confirmation(console, agent):
    entry_id = posted(agent)

    response = console.post(
        f"/console/entries/{entry_id}/delete",
        {"step": "confirm", "reason": "personal data", "next": "/console/entries/"},
    )

    page = response.content.decode()
    assert response.status_code == 200 and f"Delete entry {entry_id}?" in page
    assert 'name="reason" maxlength="500" required value="personal data"' in page
    assert '<input type="hidden" name="next" value="/console/entries/">' in page
    # Only asked: nothing deleted, nothing audited.
    assert Entry.objects.get(pk=entry_id).deleted_at is None
    assert not AuditEvent.objects.filter(action="entry_delete").exists()


def test_confirming_deletes_with_the_carried_reason(console, agent):
    entry_id = posted(agent)
    console.post(f"/console/entries/{entry_id}/delete", {"step": "confirm", "reason": "spam"})

    response = console.post(f"/console/entries/{entry_id}/delete", {"reason": "spam"})

    assert response.status_code == 302
    assert Entry.objects.get(pk=entry_id).deleted_at is not None
    event = AuditEvent.objects.get(action="entry_delete")
    assert (event.action, event.target_ids, event.reason) == ("entry_delete", [entry_id], "spam")


def test_the_delete_confirmation_opened_directly_starts_empty(console, agent):
    entry_id = posted(agent)

    page = console.get(f"/console/entries/{entry_id}/delete").content.decode()

    assert 'required value="">' in page


def test_the_retention_page_calls_the_audit_retention_fixed(console):
    page = console.get("/console/retention/").content.decode()

    row = re.search(r"<code>purge-audit-events</code>.*?</tr>", page, flags=re.S).group(0)
    assert "one year, fixed" in row
    assert "SETTLE_AUDIT_RETENTION" not in page
    # Those an operator does set are still named.
    assert "SETTLE_ENTRY_RETENTION" in page and "SETTLE_TOMBSTONE_RETENTION" in page


def test_before_a_first_run_the_retention_page_says_when_while_beat_runs(console):
    # given: no purge has run yet
    page = console.get("/console/retention/").content.decode()

    # then: interval jobs say within how long, daily ones their time
    assert "one interval after beat starts" not in page
    assert "within 10 minutes while beat runs" in page
    row = re.search(r"<code>purge-expired-threads</code>.*?</tr>", page, flags=re.S).group(0)
    assert "(no run recorded yet)" in row

    # and once a run is recorded, the next one is a time
    maintenance.job_run(job="purge-expired-threads", purge=maintenance.purge_expired_threads)
    page = console.get("/console/retention/").content.decode()
    row = re.search(r"<code>purge-expired-threads</code>.*?</tr>", page, flags=re.S).group(0)
    assert "while beat runs" not in row and row.count("<time") == 2


def test_audit_details_read_as_words_not_python(console):
    moderation.token_issue(actor="op", name="bot")  # hourly_limit not given
    moderation.posting_set_limits(actor="op", source_hourly_limit=20, overall_hourly_limit=None)
    moderation.audit_record(
        actor="op", action="purge_run_now", details={"jobs": ["purge-a", "purge-b"]}
    )

    page = console.get("/console/audit/").content.decode()

    assert 'jobs: <span class="mono">purge-a, purge-b</span>' in page
    assert 'hourly limit: <span class="mono">not set</span>' in page
    assert 'source hourly limit: <span class="mono">20</span>' in page
    assert 'overall hourly limit: <span class="mono">not set</span>' in page
    for python in ("None", "['", "=["):
        assert python not in page.split("<tbody>")[1]


def test_every_page_names_an_icon_that_is_served(console, client):
    page = client.get("/threads/").content.decode()
    (href,) = re.findall(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert href in console.get("/console/").content.decode()
    assert finders.find("favicon.svg")

    icon = client.get(href)

    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content)


@pytest.mark.parametrize(
    "seconds, words",
    [(0, "0 s"), (59, "59 s"), (60, "1 min"), (3599, "59 min"), (3660, "1 h 1 min"),
     (86400 + 7200, "1 d 2 h"), (-5, "0 s")],
)
def test_an_inbox_age_reads_in_its_two_largest_units(seconds, words):
    from datetime import timedelta

    from moderation.templatetags.console import age

    assert age(timedelta(seconds=seconds)) == words
