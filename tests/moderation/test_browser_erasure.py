"""Erasure and the forecast in headless Chromium (SPEC 8.3, 8.4): an administrator starts
an erasure on the tokens page and watches its progress bar, refreshed by the page itself
(a meta refresh, no script), reach the end while a real Celery worker runs it; a
moderator sees the retention page but can change nothing."""

import pytest
from django.utils import timezone

from board.models import Entry
from maintenance.forecast import forecast_record
from moderation.models import AuditEvent, Erasure
from tests.celery_worker import celery_worker
from tests.conftest import issue_agent, question, reply
from tests.moderation.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_administrator_erases_an_agents_entries_and_watches_the_progress_bar(
    browser_page, administrator, roomy_limits, tmp_path
):
    # given: 120 entries of a spammer
    spammer = issue_agent("spammer")
    for _ in range(12):
        question_id = spammer.post(question()).json()["id"]
        for _ in range(9):
            spammer.post(reply(question_id))
    log_in(browser_page, "admin", "secret-password")

    with celery_worker(tmp_path, beat=False, env={"SETTLE_ERASE_BATCH_SIZE": "3"}) as log:
        # when: the administrator erases them on the tokens page
        browser_page.goto("/console/tokens/")
        row = browser_page.locator("#agent-spammer")
        row.get_by_label("Reason for erasing the entries of spammer").fill("spam flood")
        row.get_by_role("button", name="Erase entries").click()
        # the confirmation says what would go; nothing is erased until it is confirmed
        browser_page.get_by_role("heading", name="Erase the entries of spammer?").wait_for()
        assert "120 entries (12 questions, 108 replies)" in browser_page.locator(
            "#erase-counts"
        ).inner_text()
        assert not Erasure.objects.exists()
        browser_page.get_by_role("button", name="Erase entries").click()
        browser_page.get_by_role("heading", name="Erasure of spammer").wait_for()
        bar = browser_page.locator("#erasure-progress")
        assert bar.get_attribute("max") == "120"

        # then: the page refreshes itself until the bar is full
        browser_page.locator("#erasure-status", has_text="finished").wait_for(timeout=90_000)
        assert log.exists()

    bar = browser_page.locator("#erasure-progress")
    assert bar.get_attribute("value") == bar.get_attribute("max") == "120"
    assert "120 of 120 entries erased (12 questions, 108 replies)" in browser_page.locator(
        "#erasure-status"
    ).inner_text()
    assert Erasure.objects.get().state == "finished"
    assert not Entry.objects.filter(deleted_at__isnull=True).exists()
    assert {"erase_start", "erase_end"} <= set(AuditEvent.objects.values_list("action", flat=True))
    browser_page.goto("/console/retention/")
    assert "finished" in browser_page.locator("#erasures").inner_text()


def test_a_moderator_sees_the_forecast_but_no_control(browser_page, moderator, roomy_limits):
    issue_agent("spammer").post(question())
    forecast_record(now=timezone.now())  # what beat runs: the page never runs the dry run
    log_in(browser_page, "mod", "secret-password")

    browser_page.goto("/console/retention/")
    browser_page.get_by_role("heading", name="What a purge now would remove").wait_for()
    assert browser_page.locator("#forecast-purge-expired-threads").is_visible()
    assert browser_page.get_by_role("button", name="Run purge now").count() == 0
    browser_page.goto("/console/tokens/")
    assert browser_page.get_by_role("button", name="Erase entries").count() == 0
