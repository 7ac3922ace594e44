"""The retention page's policies and holds, the tokens page's entry retention, and held
deleted text on the console (SPEC 8.1, 8.2): administrators change, moderators see."""

import pytest
from django.utils.html import escape

from board.models import Hold, Principal, RetentionPolicy
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.conftest import question
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.usefixtures("roomy_limits")

PAGE = "/console/retention/"


def test_an_administrator_sets_and_clears_a_policy(administrator):
    console = logged_in(administrator)

    console.post("/console/retention/policy", {"policy": "deletion", "duration": "2d"})
    assert RetentionPolicy.objects.get(name="deletion").seconds == 2 * 86400
    assert "172800 s" in console.get(PAGE).content.decode()
    console.post("/console/retention/policy", {"policy": "deletion", "action": "clear"})

    assert not RetentionPolicy.objects.exists()
    assert AuditEvent.objects.filter(target_type="retention", actor="admin").count() == 2


def test_a_refused_value_changes_nothing_and_says_why(administrator):
    console = logged_in(administrator)

    response = console.post(
        "/console/retention/policy", {"policy": "attempt", "duration": "400d"}, follow=True
    )

    assert "attempt: 400d is out of bounds" in response.content.decode()
    assert not RetentionPolicy.objects.exists()


@pytest.mark.parametrize("duration", ["\u0661\u0662h", "\uff17d", "\u00b9h"])
def test_a_duration_in_other_digits_than_ascii_changes_nothing(administrator, duration):
    console = logged_in(administrator)

    response = console.post(
        "/console/retention/policy", {"policy": "entry", "duration": duration}, follow=True
    )

    assert escape(f"entry: {duration!r} is not a duration") in response.content.decode()
    assert not RetentionPolicy.objects.exists()
    assert not AuditEvent.objects.filter(target_type="retention").exists()


def test_the_tokens_page_sets_a_principals_entry_retention(administrator, agent):
    console = logged_in(administrator)

    response = console.post(
        "/console/retention/policy",
        {"policy": "entry", "principal": agent.name, "duration": "7d", "next": "/console/tokens/"},
    )

    assert response.status_code == 302 and response["Location"] == "/console/tokens/"
    assert Principal.objects.get(name=agent.name).entry_retention == 7 * 86400
    assert "604800 s" in console.get("/console/tokens/").content.decode()


def test_a_moderator_sees_policies_and_holds_but_changes_nothing(moderator, agent):
    question_id = agent.post(question()).json()["id"]
    moderation.hold_add(actor="test", reason="kept for a case", thread_id=question_id)
    console = logged_in(moderator)

    page = console.get(PAGE).content.decode()
    refused = [
        console.post("/console/retention/policy", {"policy": "entry", "duration": "1d"}),
        console.post("/console/retention/holds", {"thread": question_id, "reason": "x"}),
        console.post(f"/console/retention/holds/{Hold.objects.get().pk}/release", {"reason": "x"}),
    ]

    assert "kept for a case" in page and "Place hold" not in page
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert Hold.objects.get().released_at is None and not RetentionPolicy.objects.exists()


def test_an_administrator_places_and_releases_a_hold_shown_on_the_thread(administrator, agent):
    question_id = agent.post(question()).json()["id"]
    console = logged_in(administrator)

    console.post("/console/retention/holds", {"thread": question_id, "reason": "legal"})
    hold = Hold.objects.get()
    thread_page = console.get(f"/console/entries/{question_id}/").content.decode()
    console.post(f"/console/retention/holds/{hold.pk}/release", {"reason": "closed"})

    assert "Hold" in thread_page and "legal" in thread_page
    hold.refresh_from_db()
    assert hold.released_at is not None and hold.released_by == "admin"
    assert "No active holds." in console.get(PAGE).content.decode()


def test_held_deleted_text_is_shown_to_administrators_only(administrator, moderator, agent):
    asked = question(body="evidence kept under hold")
    question_id = agent.post(asked).json()["id"]
    moderation.hold_add(actor="test", reason="case", thread_id=question_id)
    moderation.entry_delete(actor="test", entry_id=question_id, reason="spam")

    pages = {
        who: [
            logged_in(user).get("/console/entries/?visibility=deleted").content.decode(),
            logged_in(user).get(f"/console/entries/{question_id}/").content.decode(),
        ]
        for who, user in (("admin", administrator), ("mod", moderator))
    }

    assert all("evidence kept under hold" in page or asked["title"] in page
               for page in pages["admin"])
    assert "held" in pages["admin"][1]
    assert not any("evidence kept under hold" in page or asked["title"] in page
                   for page in pages["mod"])
    assert not any(asked["actor"]["name"] in page for page in pages["mod"])



def test_the_jobs_table_shows_the_policy_in_force(moderator):
    moderation.retention_set(actor="test", policy="attempt", seconds=3 * 86400)

    page = logged_in(moderator).get(PAGE).content.decode()

    assert "3 days" in page and "7 days" not in page


def test_a_moderator_cannot_find_held_deleted_text_by_searching(moderator, agent):
    question_id = agent.post(question(body="evidence kept under hold")).json()["id"]
    moderation.hold_add(actor="test", reason="case", thread_id=question_id)
    moderation.entry_delete(actor="test", entry_id=question_id, reason="spam")

    page = logged_in(moderator).get("/console/entries/?q=evidence").content.decode()

    assert f'id="entry-{question_id}"' not in page


@pytest.mark.parametrize("thread", ["²", "x1", "9" * 30])
def test_a_thread_that_is_not_an_id_places_no_hold(administrator, agent, thread):
    agent.post(question())

    response = logged_in(administrator).post(
        "/console/retention/holds", {"thread": thread, "reason": "legal"}, follow=True
    )

    assert response.status_code == 200
    assert "No hold placed" in response.content.decode()
    assert not Hold.objects.exists()
