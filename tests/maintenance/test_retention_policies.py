"""Retention policies as data (SPEC 8.1): a promise given is kept; receipts written after a
change follow it; a principal's own value wins; the purges read the policies each run."""

from datetime import timedelta

import pytest
from django.utils import timezone

from board.models import Entry
from board.retention import policies as retention
from maintenance.purges import purge_attempts, purge_expired_threads
from moderation import actions as moderation
from receipts.models import Attempt, Receipt, Tombstone
from tests.conftest import issue_agent, question

pytestmark = pytest.mark.usefixtures("roomy_limits")

DAY = 86400


def expiry_of(answer) -> timezone.datetime:
    assert answer.status_code == 201, answer.content
    return Receipt.objects.get(result_id=answer.json()["id"]).receipt_expires_at


def life_of(answer) -> timedelta:
    entry = Entry.objects.get(pk=answer.json()["id"])
    return Receipt.objects.get(result_id=entry.pk).receipt_expires_at - entry.created_at


def set_entry(days: int, principal: str | None = None) -> None:
    moderation.retention_set(
        actor="test", policy="entry", seconds=days * DAY, principal=principal
    )


@pytest.mark.parametrize("days", [3, 90], ids=["shorter", "longer"])
def test_it_leaves_existing_expiries_as_they_were_and_new_receipts_follow(agent, days):
    # given
    first = agent.post(question())
    promised = expiry_of(first)

    # when
    set_entry(days)
    second = agent.post(question())

    # then
    assert Receipt.objects.get(result_id=first.json()["id"]).receipt_expires_at == promised
    assert life_of(first) == timedelta(days=30)
    assert life_of(second) == timedelta(days=days)


def test_it_lets_a_principals_own_retention_win_over_the_console(agent, other_agent):
    set_entry(90)
    set_entry(7, principal=other_agent.name)

    mine, theirs = agent.post(question()), other_agent.post(question())

    assert life_of(mine) == timedelta(days=90)
    assert life_of(theirs) == timedelta(days=7)


def test_it_returns_to_the_environment_when_cleared(agent):
    set_entry(3)
    moderation.retention_clear(actor="test", policy="entry")

    answer = agent.post(question())

    assert life_of(answer) == timedelta(days=30)
    assert retention.retention_current()["entry"] == retention.InForce(30 * DAY, "environment")


def test_it_gives_a_token_issued_with_a_retention_that_life(db):
    agent = issue_agent("short-lived", entry_retention=2 * DAY)

    assert life_of(agent.post(question())) == timedelta(days=2)


def test_it_serves_the_console_value_from_the_cache_until_it_is_due(agent, settings):
    # given: this process has read the value (a post), then another process changes it
    settings.SETTLE_RETENTION_CACHE_SECONDS = 3600
    agent.post(question())
    retention.RetentionPolicy.objects.create(name="entry", seconds=5 * DAY)

    # when, then: the cached value until the cache is due, then the new one
    assert life_of(agent.post(question())) == timedelta(days=30)
    settings.SETTLE_RETENTION_CACHE_SECONDS = 0
    assert life_of(agent.post(question())) == timedelta(days=5)


def test_it_audits_a_change_with_before_and_after_in_seconds(db):
    from moderation.models import AuditEvent

    set_entry(3)
    moderation.retention_clear(actor="test", policy="entry")

    events = list(AuditEvent.objects.filter(target_type="retention").order_by("id"))
    assert [e.action for e in events] == ["retention_set", "retention_clear"]
    assert events[0].details["before"] == {"seconds": 30 * DAY, "source": "environment"}
    assert events[0].details["after"] == {"seconds": 3 * DAY, "source": "console"}
    assert events[1].details["after"] == {"seconds": 30 * DAY, "source": "environment"}


def test_it_writes_tombstones_with_the_tombstone_policy_of_the_purge(agent):
    # given
    answer = agent.post(question())
    expires = expiry_of(answer)
    moderation.retention_set(actor="test", policy="tombstone", seconds=10 * DAY)

    # when
    purge_expired_threads(now=timezone.now() + timedelta(days=31), batch_size=100)

    # then
    tombstone = Tombstone.objects.get()
    assert tombstone.expires_at == (expires + timedelta(days=10)).date() + timedelta(days=1)


def test_it_purges_attempts_by_the_attempt_policy_at_the_purge(agent):
    payload = question()
    agent.post(payload)
    agent.post(payload)  # the replay's attempt is logged (the post's is its receipt)
    assert Attempt.objects.count() == 1
    moderation.retention_set(actor="test", policy="attempt", seconds=2 * 3600)

    kept = purge_attempts(now=timezone.now() + timedelta(hours=1), batch_size=100)
    gone = purge_attempts(now=timezone.now() + timedelta(hours=3), batch_size=100)

    assert (kept.counts["attempts"], gone.counts["attempts"]) == (0, 1)
    assert Attempt.objects.count() == 0


def test_it_refuses_a_value_out_of_bounds_and_changes_nothing(db):
    with pytest.raises(retention.PolicyRefused, match="tombstone"):
        moderation.retention_set(actor="test", policy="tombstone", seconds=3600)

    assert not retention.RetentionPolicy.objects.exists()


def test_a_lengthened_deletion_policy_keeps_earlier_deletions_at_the_next_purge(agent):
    # given: an entry deleted under the 30-day default
    from maintenance.purges import purge_deletion_records

    entry_id = agent.post(question()).json()["id"]
    moderation.entry_delete(actor="test", entry_id=entry_id, reason="spam")

    # when: the policy grows to 60 days before the purge
    moderation.retention_set(actor="test", policy="deletion", seconds=60 * DAY)
    kept = purge_deletion_records(now=timezone.now() + timedelta(days=31), batch_size=100)
    gone = purge_deletion_records(now=timezone.now() + timedelta(days=61), batch_size=100)

    # then
    assert (kept.counts["receipts"], gone.counts["receipts"]) == (0, 1)
    assert Tombstone.objects.get().reason == Tombstone.Reason.DELETED
