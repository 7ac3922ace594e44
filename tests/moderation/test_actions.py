"""Every console change writes exactly one audit event: who, what, which ids, why; never
an entry's text. A reason is required for pause, resume, hide, unhide and delete."""

import json
import re

import pytest

from board.models import AgentToken, Entry, PostingPolicy, Principal
from moderation import actions as moderation
from moderation.models import AuditEvent
from receipts.models import Receipt
from tests.conftest import question

pytestmark = pytest.mark.django_db

TITLE = "A very particular title"
BODY = "Some body text only this entry has"


@pytest.fixture
def entry(agent, roomy_limits) -> Entry:
    answer = agent.post(question(title=TITLE, body=BODY))
    return Entry.objects.get(pk=answer.json()["id"])


def console_events():
    # The fixtures issue tokens as actor "test"; only the console's events are of interest.
    return list(AuditEvent.objects.exclude(actor="test"))


def assert_one_event(*, action: str, target_ids: list, reason: str = "") -> AuditEvent:
    events = console_events()
    assert len(events) == 1, [e.action for e in events]
    event = events[0]
    assert (event.actor, event.action, event.target_ids, event.reason) == (
        "operator", action, target_ids, reason
    )
    recorded = json.dumps([event.target_type, event.reason, event.details, event.target_ids])
    assert TITLE not in recorded and BODY not in recorded
    return event


ENTRY_ACTIONS = [("hide", "entry_hide"), ("unhide", "entry_unhide"), ("delete", "entry_delete")]


@pytest.mark.parametrize("verb, action", ENTRY_ACTIONS)
def test_it_audits_each_entry_action_once_with_its_reason(console, entry, verb, action):
    response = console.post(f"/console/entries/{entry.pk}/{verb}", {"reason": f"why {verb}"})
    assert response.status_code == 302
    assert_one_event(action=action, target_ids=[entry.pk], reason=f"why {verb}")


@pytest.mark.parametrize("verb", ["hide", "unhide", "delete"])
def test_it_refuses_entry_actions_without_a_reason(console, entry, verb):
    response = console.post(f"/console/entries/{entry.pk}/{verb}", {"reason": "   "}, follow=True)
    assert b"a reason is required" in response.content
    entry.refresh_from_db()
    assert entry.visible and entry.deleted_at is None and entry.body == BODY
    assert console_events() == []


def test_hiding_keeps_the_content_and_takes_it_out_of_public_reads(console, entry, agent, client):
    console.post(f"/console/entries/{entry.pk}/hide", {"reason": "off-topic"})
    entry.refresh_from_db()
    assert not entry.visible and entry.body == BODY
    assert client.get(f"/threads/{entry.pk}").status_code == 404
    assert client.get(f"/api/v1/threads/{entry.pk}").status_code == 404


def test_deleting_removes_text_and_actor_and_marks_the_receipt(console, entry, agent):
    payload = question(title=TITLE, body=BODY)
    posted = agent.post(payload).json()
    target = Entry.objects.get(pk=posted["id"])
    console.post(f"/console/entries/{target.pk}/delete", {"reason": "abuse"})
    target.refresh_from_db()
    assert (target.title, target.body, target.actor_name) == ("", "", "")
    assert target.deleted_at is not None and not target.visible
    assert Receipt.objects.get(result_id=target.pk).state == Receipt.State.DELETED
    retry = agent.post(payload)
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"


def test_delete_asks_for_confirmation_first(console, entry):
    page = console.get(f"/console/entries/{entry.pk}/delete")
    assert page.status_code == 200
    assert b"cannot be undone" in page.content and b">Delete</button>" in page.content
    entry.refresh_from_db()
    assert entry.deleted_at is None
    assert console_events() == []


def test_it_audits_pause_and_resume_with_their_reasons(console):
    console.post("/console/posting/pause", {"reason": "incident 42"})
    assert PostingPolicy.objects.get().paused
    assert_one_event(action="posting_pause", target_ids=[], reason="incident 42")
    AuditEvent.objects.all().delete()
    console.post("/console/posting/resume", {"reason": "fixed"})
    assert not PostingPolicy.objects.get().paused
    assert_one_event(action="posting_resume", target_ids=[], reason="fixed")


@pytest.mark.parametrize("verb", ["pause", "resume"])
def test_it_refuses_to_switch_posting_without_a_reason(console, verb):
    response = console.post(f"/console/posting/{verb}", {"reason": ""}, follow=True)
    assert b"a reason is required" in response.content
    assert not PostingPolicy.objects.filter(paused=True).exists()
    assert console_events() == []


def test_it_audits_new_limits(console):
    response = console.post(
        "/console/posting/limits", {"source_hourly_limit": "7", "overall_hourly_limit": ""},
        follow=True,
    )
    assert b"Hourly limits saved." in response.content
    policy = PostingPolicy.objects.get()
    assert (policy.source_hourly_limit, policy.overall_hourly_limit) == (7, None)
    event = assert_one_event(action="posting_limits", target_ids=[])
    assert event.details == {"source_hourly_limit": 7, "overall_hourly_limit": None}


def test_the_posting_page_shows_the_limits_in_force(console, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT, settings.SETTLE_OVERALL_HOURLY_LIMIT = 60, 900
    PostingPolicy.objects.update_or_create(pk=1, defaults={"source_hourly_limit": 7})

    page = console.get("/console/posting/").content.decode()

    in_force = re.findall(r'<th scope="row">[^<]*</th><td class="num">([^<]*)</td>', page)
    assert in_force == ["7", "900"]  # the console's per-source limit, the server's overall


@pytest.mark.parametrize("value", ["-1", str(10**20)])
def test_it_refuses_limits_out_of_range(console, value):
    response = console.post("/console/posting/limits", {"source_hourly_limit": value}, follow=True)
    assert response.status_code == 200
    assert b"Limits not changed" in response.content
    assert console_events() == []


def test_it_refuses_a_token_limit_too_large_to_store(console):
    response = console.post(
        "/console/tokens/issue", {"name": "big", "hourly_limit": str(10**20)}, follow=True
    )
    assert response.status_code == 200
    assert not Principal.objects.filter(name="big").exists()
    assert console_events() == []


def test_it_audits_issuing_and_revoking_tokens(console):
    console.post("/console/tokens/issue", {"name": "bot", "hourly_limit": "12"})
    bot = Principal.objects.get(name="bot")
    assert bot.hourly_limit == 12
    event = assert_one_event(action="token_issue", target_ids=[bot.pk])
    token = AgentToken.objects.get(principal=bot)
    assert token.token_hash not in json.dumps(event.details)
    AuditEvent.objects.all().delete()
    response = console.post(
        "/console/tokens/revoke", {"name": "bot", "reason": "retired"}, follow=True
    )
    assert b"Revoked 1 token of bot." in response.content
    assert_one_event(action="token_revoke", target_ids=[bot.pk], reason="retired")


@pytest.mark.parametrize("held", [False, True])
def test_a_deletion_says_whether_the_text_is_gone_or_held(console, entry, held):
    if held:
        moderation.hold_add(actor="test", reason="a case", thread_id=entry.pk)

    response = console.post(f"/console/entries/{entry.pk}/delete", {"reason": "r"}, follow=True)

    said = response.content.decode()
    assert f"Entry {entry.pk} is deleted" in said
    assert ("its text and actor are kept" in said) is held
    assert ("Its text is gone." in said) is not held


def test_revoking_the_tokens_of_an_unknown_name_is_refused_and_not_audited(console):
    response = console.post(
        "/console/tokens/revoke", {"name": "nobody", "reason": "retired"}, follow=True
    )

    assert b"Nothing revoked: no agent is named" in response.content
    assert not AuditEvent.objects.filter(action="token_revoke").exists()


def test_every_action_leaves_a_message(console, entry):
    for path, data in [
        ("/console/posting/pause", {"reason": "r"}),
        ("/console/posting/resume", {"reason": "r"}),
        (f"/console/entries/{entry.pk}/hide", {"reason": "r"}),
        (f"/console/entries/{entry.pk}/unhide", {"reason": "r"}),
        (f"/console/entries/{entry.pk}/delete", {"reason": "r"}),
        ("/console/tokens/revoke", {"name": "agent"}),
    ]:
        response = console.post(path, data, follow=True)
        assert b'class="messages"' in response.content, path
