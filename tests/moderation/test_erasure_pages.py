"""The console's erasure (tokens page `Erase entries`, the progress page) and the
retention page's forecast (SPEC 8.3, 8.4)."""

import pytest

from board.models import Entry
from maintenance import services as maintenance
from moderation.models import AuditEvent, Erasure
from tests.conftest import question
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

    page = console.get("/console/retention/").content.decode()

    assert 'id="forecast-purge-expired-threads"' in page
    assert "1 receipt expire in the next 30 days" in page
    assert "Durations in seconds of the last 1 runs of purge-expired-threads" in page
    assert page.count("<svg") >= 2
