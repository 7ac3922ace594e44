"""Who may open and change what in the console (SPEC 7), checked on the server."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from board.models import AgentToken, Entry, PostingPolicy, Principal
from moderation.models import AuditEvent
from tests.conftest import question
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.django_db

PAGES = ["/console/", "/console/posting/", "/console/entries/", "/console/operations/",
         "/console/tokens/", "/console/retention/", "/console/audit/"]


@pytest.fixture
def entry(agent, roomy_limits) -> Entry:
    return Entry.objects.get(pk=agent.post(question()).json()["id"])


def changes(entry_id: int) -> list[tuple[str, dict]]:
    return [
        ("/console/posting/pause", {"reason": "incident"}),
        ("/console/posting/resume", {"reason": "over"}),
        ("/console/posting/limits", {"source_hourly_limit": "5", "overall_hourly_limit": "9"}),
        ("/console/tokens/issue", {"name": "new-agent"}),
        ("/console/tokens/revoke", {"name": "agent"}),
        (f"/console/entries/{entry_id}/hide", {"reason": "spam"}),
        (f"/console/entries/{entry_id}/unhide", {"reason": "fine"}),
        (f"/console/entries/{entry_id}/delete", {"reason": "spam"}),
        ("/console/retention/run", {"reason": "now"}),
    ]


@pytest.mark.parametrize("path", PAGES)
def test_it_sends_anonymous_users_to_login(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/?next=")


def test_it_sends_anonymous_posts_to_login_and_changes_nothing(client):
    response = client.post("/console/posting/pause", {"reason": "x"})
    assert response.status_code == 302
    assert not PostingPolicy.objects.filter(paused=True).exists()
    assert AuditEvent.objects.count() == 0


def test_it_refuses_accounts_that_are_not_staff(django_user_model):
    user = django_user_model.objects.create_user("visitor", "", "secret-password")
    assert logged_in(user).get("/console/").status_code == 302
    response = Client().post(
        "/console/login/", {"username": "visitor", "password": "secret-password"}
    )
    assert response.status_code == 200
    assert b"staff account" in response.content


def test_it_logs_staff_in_with_username_and_password(operator):
    client = Client()
    response = client.post(
        "/console/login/", {"username": "operator", "password": "operator-password"}
    )
    assert response.status_code == 302 and response["Location"] == "/console/"
    assert client.get("/console/").status_code == 200


@pytest.mark.parametrize("path", PAGES)
def test_it_shows_every_page_to_staff_in_no_group(reader, path):
    response = logged_in(reader).get(path)
    assert response.status_code == 200
    assert b"Pause posting" not in response.content
    assert b"Issue token" not in response.content


def test_it_lets_staff_in_no_group_change_nothing(reader, entry, agent):
    client = logged_in(reader)
    for path, data in changes(entry.pk):
        assert client.post(path, data).status_code == 403, path
    entry.refresh_from_db()
    assert entry.visible and entry.deleted_at is None and entry.body
    assert not PostingPolicy.objects.filter(paused=True).exists()
    assert not Principal.objects.filter(name="new-agent").exists()
    assert not AgentToken.objects.filter(revoked_at__isnull=False).exists()
    assert AuditEvent.objects.exclude(actor="test").count() == 0


def test_moderators_cannot_pause_posting_or_issue_tokens(moderator, entry):
    client = logged_in(moderator)
    assert client.post("/console/posting/pause", {"reason": "x"}).status_code == 403
    assert client.post("/console/posting/limits", {"source_hourly_limit": "1"}).status_code == 403
    assert client.post("/console/tokens/issue", {"name": "sneaky"}).status_code == 403
    assert client.post("/console/tokens/revoke", {"name": "agent"}).status_code == 403
    assert not PostingPolicy.objects.filter(paused=True).exists()
    assert not Principal.objects.filter(name="sneaky").exists()
    assert AuditEvent.objects.exclude(actor="test").count() == 0


def test_moderators_hide_unhide_and_delete(moderator, entry):
    client = logged_in(moderator)
    assert client.post(f"/console/entries/{entry.pk}/hide", {"reason": "a"}).status_code == 302
    assert client.post(f"/console/entries/{entry.pk}/unhide", {"reason": "b"}).status_code == 302
    assert client.post(f"/console/entries/{entry.pk}/delete", {"reason": "c"}).status_code == 302
    entry.refresh_from_db()
    assert entry.deleted_at is not None


def test_administrators_switch_posting_and_issue_tokens(administrator):
    client = logged_in(administrator)
    assert client.post("/console/posting/pause", {"reason": "x"}).status_code == 302
    assert PostingPolicy.objects.get().paused
    assert client.post("/console/tokens/issue", {"name": "bot"}).status_code == 200
    assert Principal.objects.filter(name="bot").exists()


def test_it_refuses_a_post_without_csrf_token(operator, entry):
    client = logged_in(operator, enforce_csrf_checks=True)
    assert client.post("/console/posting/pause", {"reason": "x"}).status_code == 403
    assert client.post(f"/console/entries/{entry.pk}/hide", {"reason": "x"}).status_code == 403
    assert not PostingPolicy.objects.filter(paused=True).exists()
    entry.refresh_from_db()
    assert entry.visible
    assert AuditEvent.objects.exclude(actor="test").count() == 0


def test_it_accepts_a_post_with_the_pages_csrf_token(operator):
    client = logged_in(operator, enforce_csrf_checks=True)
    page = client.get("/console/posting/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    response = client.post(
        "/console/posting/pause", {"reason": "x", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert PostingPolicy.objects.get().paused


def test_it_answers_get_on_an_action_with_405(console):
    assert console.get("/console/posting/pause").status_code == 405


def test_the_operator_groups_exist_after_migrating():
    names = set(Group.objects.values_list("name", flat=True))
    assert {"moderators", "administrators"} <= names
