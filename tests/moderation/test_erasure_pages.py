"""The console's erasure (tokens page `Erase entries`, the progress page) and the
retention page's forecast (SPEC 8.3, 8.4)."""

import re

import pytest
from django.utils import timezone

from board import services as board
from board.models import Entry
from maintenance import purges as maintenance
from maintenance.forecast import forecast_record
from moderation.models import AuditEvent, Erasure
from tests.conftest import question, reply
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.usefixtures("roomy_limits")


def test_an_administrator_starts_an_erasure_and_lands_on_its_progress_page(
    administrator, agent
):
    for _ in range(3):
        agent.post(question())
    console = logged_in(administrator)
    assert "Erase entries" in console.get("/console/tokens/").content.decode()

    response = console.post(
        "/console/tokens/erase", {"name": "agent", "reason": "spam flood", "revoke_tokens": "1"}
    )

    stored = Erasure.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/console/erasures/{stored.pk}/"
    assert (stored.total, stored.state, stored.revoke_tokens) == (3, "running", True)
    assert AuditEvent.objects.get(action="erase_start").actor == "admin"
    page = console.get(response["Location"]).content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page
    assert 'max="3" value="0"' in page
    assert agent.post(question()).status_code == 401  # tokens revoked with the start


def test_a_finished_erasure_page_stops_refreshing(administrator, agent):
    from moderation import erasure

    agent.post(question())
    started, _ = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    erasure.erasure_run(erasure_id=started.pk)

    page = logged_in(administrator).get(f"/console/erasures/{started.pk}/").content.decode()

    assert 'max="1" value="1"' in page and "finished" in page
    assert "http-equiv" not in page


@pytest.mark.parametrize(
    "form, message",
    [({"name": "agent", "reason": " "}, "Nothing erased"),
     ({"name": "nobody", "reason": "spam"}, "no agent is named"),
     ({"name": "agent", "reason": "spam", "since": "yesterday"}, "ISO-8601"),
     ({"name": "agent", "reason": "spam", "since": "9999-12-31T23:59:59-23:00"},
      "outside the years 1 to 9999")],
)
def test_a_refused_erasure_changes_nothing(administrator, agent, form, message):
    agent.post(question())
    response = logged_in(administrator).post("/console/tokens/erase", form, follow=True)
    assert message in response.content.decode()
    assert not Erasure.objects.exists() and not AuditEvent.objects.filter(
        action="erase_start"
    ).exists()


def test_a_moderator_sees_the_retention_page_but_can_change_nothing(moderator, agent):
    agent.post(question())
    console = logged_in(moderator)

    page = console.get("/console/retention/").content.decode()
    tokens = console.get("/console/tokens/").content.decode()
    refused = console.post("/console/tokens/erase", {"name": "agent", "reason": "spam"})

    assert "What a purge now would remove" in page and "purge-expired-threads" in page
    assert "Run purge now" not in page and "Erase entries" not in tokens
    assert refused.status_code == 403
    assert not Erasure.objects.exists()
    assert Entry.objects.filter(deleted_at__isnull=True).count() == 1


def test_the_retention_page_shows_the_forecast_expiring_receipts_and_recent_runs(
    console, agent
):
    agent.post(question())
    maintenance.job_run(job="purge-expired-threads", purge=maintenance.purge_expired_threads)
    forecast_record(now=timezone.now())  # what beat runs: the page never runs the dry run

    page = console.get("/console/retention/").content.decode()

    assert 'id="forecast-purge-expired-threads"' in page
    assert "1 receipt expires in the 30 days after" in page
    assert "Durations in seconds of the last run of purge-expired-threads" in page
    assert page.count("<svg") >= 2


def test_erase_entries_asks_first_and_erases_nothing_until_confirmed(administrator, agent):
    # given: an agent with a question and two replies, one of them already deleted
    question_id = agent.post(question()).json()["id"]
    agent.post(reply(question_id))
    deleted = agent.post(reply(question_id)).json()["id"]
    board.entry_delete(entry_id=deleted, now=timezone.now())
    console = logged_in(administrator)

    # when: the tokens page's `Erase entries` is pressed
    asked = console.post("/console/tokens/erase", {
        "name": "agent", "reason": "spam flood", "revoke_tokens": "1", "step": "confirm",
    })

    # then: a page says what would go, counted as the dry run counts, and nothing changed
    page = asked.content.decode()
    assert asked.status_code == 200
    assert "Erase the entries of agent?" in re.sub(r"<[^>]+>", "", page)
    assert "<strong>2</strong> entries (1 question, 1 reply)" in page
    assert "cannot be undone" in page
    assert 'value="spam flood"' in page and "checked" in page
    assert not Erasure.objects.exists()
    assert not AuditEvent.objects.filter(action="erase_start").exists()
    assert Entry.objects.filter(deleted_at__isnull=True).count() == 2
    assert agent.post(question()).status_code == 201  # its token still works

    # when confirmed: the erasure starts
    started = console.post("/console/tokens/erase", {
        "name": "agent", "reason": "spam flood", "revoke_tokens": "1", "since": "",
    })
    assert started["Location"] == f"/console/erasures/{Erasure.objects.get().pk}/"


def test_the_confirmation_counts_only_entries_since_and_names_one_entry_in_the_singular(
    administrator, agent
):
    agent.post(question())
    console = logged_in(administrator)

    one = console.get("/console/tokens/erase", {"name": "agent"}).content.decode()
    none = console.get(
        "/console/tokens/erase", {"name": "agent", "since": "2999-01-01T00:00Z"}
    ).content.decode()

    assert "<strong>1</strong> entry (1 question, 0 replies)" in one
    assert "<strong>0</strong> entries (0 questions, 0 replies) created since" in none
    assert not Erasure.objects.exists()


@pytest.mark.parametrize(
    "query, message",
    [({"name": "nobody"}, "no agent is named"), ({"name": "agent", "since": "soon"}, "ISO-8601")],
)
def test_a_confirmation_that_cannot_be_asked_says_why(administrator, agent, query, message):
    response = logged_in(administrator).get("/console/tokens/erase", query, follow=True)
    assert message in response.content.decode()
    assert response.redirect_chain[-1][0] == "/console/tokens/"


def test_the_progress_page_counts_in_the_singular_and_plural(administrator, agent):
    from moderation import erasure

    agent.post(question())
    started, _ = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    erasure.erasure_run(erasure_id=started.pk)

    page = logged_in(administrator).get(f"/console/erasures/{started.pk}/").content.decode()

    assert "of <strong>1</strong> entry erased (1 question, 0 replies)" in page


def test_the_confirmation_past_the_count_bound_says_more_than_it_and_splits_nothing(
    administrator, agent, monkeypatch
):
    # given: the console's count bound lowered to 3, and an agent with 4 live entries
    from moderation import selectors

    monkeypatch.setattr(selectors, "COUNT_BOUND", 3)
    question_id = agent.post(question()).json()["id"]
    for _ in range(3):
        agent.post(reply(question_id))

    # when
    page = logged_in(administrator).get(
        "/console/tokens/erase", {"name": "agent"}
    ).content.decode()

    # then: "more than" the bound, no split into questions and replies, nothing changed
    assert "This erases <strong>more than 3</strong> entries, counted now" in page
    assert "question," not in page and "counts them exactly" in page
    assert not Erasure.objects.exists()
    assert Entry.objects.filter(deleted_at__isnull=True).count() == 4


def test_a_start_past_the_count_bound_leaves_the_exact_total_to_the_worker(
    administrator, agent, monkeypatch
):
    # given: the bound lowered to 3, and an agent with 5 live entries
    from moderation import erasure, selectors

    monkeypatch.setattr(selectors, "COUNT_BOUND", 3)
    for _ in range(5):
        agent.post(question())
    console = logged_in(administrator)

    # when: the erasure is confirmed (the request counts no further than the bound)
    response = console.post(
        "/console/tokens/erase", {"name": "agent", "reason": "spam flood", "revoke_tokens": "1"}
    )

    # then: recorded, tokens revoked, the total (and the start's event) not yet written
    started = Erasure.objects.get()
    assert (started.total, started.state, started.tokens_revoked) == (None, "running", 1)
    assert not AuditEvent.objects.filter(action="erase_start").exists()
    assert agent.post(question()).status_code == 401
    page = console.get(response["Location"]).content.decode()
    assert "The total is being counted: more than 3 entries" in page
    assert "total being counted" in console.get("/console/retention/").content.decode()

    # when: the worker runs it (what the Celery task calls)
    finished = erasure.erasure_run(erasure_id=started.pk, batch_size=2)

    # then: the exact total, in the record and the start's event, written before the end
    assert (finished.total, finished.done, finished.state) == (5, 5, "finished")
    start, end = AuditEvent.objects.filter(action__startswith="erase_").order_by("id")
    assert (start.action, start.actor, start.reason) == ("erase_start", "admin", "spam flood")
    assert (start.details["total"], start.details["tokens_revoked"]) == (5, 1)
    assert end.action == "erase_end" and end.details["done"] == 5
    assert 'max="5" value="5"' in console.get(response["Location"]).content.decode()
