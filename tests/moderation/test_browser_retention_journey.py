"""The retention manager's whole journey in headless Chromium (issue 15, SPEC 8.1 to 8.4):
an administrator changes a policy, places and releases a hold, erases an agent's entries
and watches the progress bar reach the end (a real Celery worker runs it), then finds
each step in the audit log; a moderator sees the retention page but no control."""

import pytest
from django.utils import timezone

from board.models import Entry, Hold, RetentionPolicy
from maintenance.forecast import forecast_record
from moderation import actions as moderation
from moderation.models import AuditEvent, Erasure
from tests.celery_worker import celery_worker
from tests.conftest import issue_agent, question, reply
from tests.moderation.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RETENTION = "/console/retention/"
CHANGING = [
    'form[action="/console/retention/policy"]',
    'form[action="/console/retention/holds"]',
    'form[action*="/console/retention/holds/"][action$="/release"]',
    'form[action="/console/retention/run"]',
    'form[action="/console/tokens/erase"]',
]


def policy_row(page, name: str):
    return page.locator("#policies tbody tr").filter(
        has=page.get_by_role("rowheader", name=name, exact=True)
    )



def test_an_administrator_changes_a_policy_holds_releases_erases_and_audits_each_step(
    browser_page, administrator, roomy_limits, tmp_path
):
    # given: a thread to hold, and 24 entries of a spammer to erase (real API posts)
    keeper = issue_agent("keeper")
    held_thread = keeper.post(question(title="Evidence for a case")).json()["id"]
    spammer = issue_agent("spammer")
    for _ in range(4):
        question_id = spammer.post(question()).json()["id"]
        for _ in range(5):
            assert spammer.post(reply(question_id)).status_code == 201
    page = browser_page
    log_in(page, "admin", "secret-password")

    # (1) the entry policy goes to 7 days, from the console
    page.goto(RETENTION)
    # the controls a moderator must not see (the second test) are here for an administrator
    assert [page.locator(selector).count() for selector in CHANGING] == [5, 1, 0, 1, 0]
    row = policy_row(page, "entry")
    row.get_by_label("New entry retention").fill("7d")
    row.get_by_role("button", name="Set").click()
    page.get_by_text("entry: 7d (console), was 30d.").wait_for()
    row = policy_row(page, "entry")
    assert "(604800 s)" in row.inner_text()
    assert row.locator("td").nth(1).inner_text().strip().startswith("console")

    # (2) a hold on the keeper's thread, with a reason
    page.get_by_label("Thread id").fill(str(held_thread))
    page.locator("#id_hold_reason").fill("legal case 42")
    page.get_by_role("button", name="Place hold").click()
    hold = Hold.objects.get()
    page.get_by_text(f"Hold {hold.pk} placed.").wait_for()
    hold_row = page.locator("#holds tbody tr").filter(has_text="legal case 42")
    assert f"thread {held_thread}" in hold_row.inner_text()
    assert page.locator(CHANGING[2]).count() == 1

    # (3) released, with a reason
    hold_row.get_by_label(f"Reason to release hold {hold.pk}").fill("case closed")
    hold_row.get_by_role("button", name="Release").click()
    page.get_by_text(f"Hold {hold.pk} released.").wait_for()
    assert "No active holds." in page.locator("#holds").inner_text()

    # (4) the spammer's entries erased from the tokens page, the bar watched to its end
    with celery_worker(tmp_path, beat=False, env={"SETTLE_ERASE_BATCH_SIZE": "3"}):
        page.goto("/console/tokens/")
        assert page.locator(CHANGING[4]).count() == 2
        agent_row = page.locator("#agent-spammer")
        agent_row.get_by_label("Reason for erasing the entries of spammer").fill("spam flood")
        agent_row.get_by_role("button", name="Erase entries").click()
        page.get_by_role("heading", name="Erase the entries of spammer?").wait_for()
        page.get_by_role("button", name="Erase entries").click()
        page.get_by_role("heading", name="Erasure of spammer").wait_for()
        assert page.locator("#erasure-progress").get_attribute("max") == "24"
        page.locator("#erasure-status", has_text="finished").wait_for(timeout=90_000)
    bar = page.locator("#erasure-progress")
    assert bar.get_attribute("value") == bar.get_attribute("max") == "24"
    assert "24 of 24 entries erased (4 questions, 20 replies)" in page.locator(
        "#erasure-status"
    ).inner_text()

    # (5) every step in the audit log
    page.goto("/console/audit/")
    body = page.locator("table tbody")
    rows = {
        action: body.locator("tr").filter(
            has=page.locator("td.mono").get_by_text(action, exact=True)
        )
        for action in ("retention_set", "hold_add", "hold_release", "erase_start", "erase_end")
    }
    assert {action: row.count() for action, row in rows.items()} == dict.fromkeys(rows, 1)
    policy_change = rows["retention_set"].inner_text()
    assert "admin" in policy_change and "policy: entry" in policy_change
    # jsonb (PostgreSQL) keeps an object's keys in its own order: compare them as sets
    details = dict(
        part.split(": ", 1) for part in policy_change.split("\t")[-1].strip().split("; ")
    )
    assert set(details["after"].split(", ")) == {"seconds: 604800", "source: console"}
    assert set(details["before"].split(", ")) == {"seconds: 2592000", "source: environment"}
    assert "legal case 42" in rows["hold_add"].inner_text()
    assert "case closed" in rows["hold_release"].inner_text()
    assert "spam flood" in rows["erase_start"].inner_text()
    assert "total: 24" in rows["erase_start"].inner_text()
    assert "done: 24" in rows["erase_end"].inner_text()

    # and the database agrees
    assert RetentionPolicy.objects.get(name="entry").seconds == 7 * 86400
    hold.refresh_from_db()
    assert hold.released_at is not None and hold.released_by == "admin"
    assert hold.release_reason == "case closed"
    erasure = Erasure.objects.get()
    assert (erasure.state, erasure.done, erasure.total) == ("finished", 24, 24)
    spam = Entry.objects.filter(principal__name="spammer")
    assert spam.count() == 24 and not spam.filter(deleted_at__isnull=True).exists()
    assert Entry.objects.get(pk=held_thread).deleted_at is None
    assert list(
        AuditEvent.objects.filter(actor="admin").order_by("id").values_list("action", flat=True)
    ) == ["retention_set", "hold_add", "hold_release", "erase_start", "erase_end"]


def test_a_moderator_sees_policies_holds_and_the_forecast_but_no_control(
    browser_page, moderator, roomy_limits
):
    keeper = issue_agent("keeper")
    held_thread = keeper.post(question()).json()["id"]
    moderation.hold_add(actor="admin", reason="kept for a case", thread_id=held_thread)
    moderation.retention_set(actor="admin", policy="entry", seconds=7 * 86400)
    forecast_record(now=timezone.now())  # what beat runs: the page never runs the dry run
    page = browser_page
    log_in(page, "mod", "secret-password")

    page.goto(RETENTION)
    assert "(604800 s)" in policy_row(page, "entry").inner_text()
    assert "kept for a case" in page.locator("#holds").inner_text()
    page.get_by_role("heading", name="What a purge now would remove").wait_for()
    assert page.locator("#forecast-purge-expired-threads").is_visible()
    assert "Only administrators can change a policy." in page.locator("#policies").inner_text()
    assert {selector: page.locator(selector).count() for selector in CHANGING} == dict.fromkeys(
        CHANGING, 0
    )
    for button in ("Set", "Clear", "Place hold", "Release", "Run purge now"):
        assert page.get_by_role("button", name=button, exact=True).count() == 0, button
    assert page.locator("div.console input:not([type=hidden])").count() == 0

    page.goto("/console/tokens/")
    page.locator("#agent-keeper").wait_for()
    assert page.get_by_role("button", name="Erase entries").count() == 0
    assert {selector: page.locator(selector).count() for selector in CHANGING} == dict.fromkeys(
        CHANGING, 0
    )

    assert Hold.objects.get().released_at is None
    assert RetentionPolicy.objects.get(name="entry").seconds == 7 * 86400
    assert not Erasure.objects.exists()
