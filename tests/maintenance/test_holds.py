"""Holds (SPEC 8.2): a held thread survives every purge past its expiry while the others
go, answers as it would without the hold, and goes on the first purge after release."""

import threading
import time
from datetime import timedelta

import pytest
import time_machine
from django.db import connections
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from board.retention.holds import HoldRefused
from maintenance import forecast
from maintenance.purges import purge_deletion_records, purge_expired_threads
from moderation import actions as moderation
from moderation.erasure import erasure_run, erasure_start
from receipts.models import Receipt, Tombstone
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

LATER = timedelta(days=31)


def purge_later():
    return purge_expired_threads(now=timezone.now() + LATER, batch_size=100)


def thread_of(agent) -> tuple[dict, int]:
    asked = question()
    answer = agent.post(asked)
    assert answer.status_code == 201
    return asked, answer.json()["id"]


def hold(**target):
    return moderation.hold_add(actor="test", reason="abuse investigation", **target)


def test_it_keeps_a_held_thread_past_expiry_while_other_threads_go(agent):
    # given
    held_payload, held_id = thread_of(agent)
    assert agent.post(reply(held_id)).status_code == 201
    _, other_id = thread_of(agent)
    hold(thread_id=held_id)

    # when
    result = purge_later()

    # then
    assert result.counts["threads"] == 1
    assert Entry.objects.filter(pk=held_id).exists()
    assert not Entry.objects.filter(pk=other_id).exists()
    assert Receipt.objects.count() == 2 and Tombstone.objects.count() == 1


def test_it_still_answers_410_expired_to_a_retry_of_a_held_thread(agent):
    payload, held_id = thread_of(agent)
    hold(thread_id=held_id)
    purge_later()

    with time_machine.travel(timezone.now() + LATER):
        answer = agent.post(payload)

    assert answer.status_code == 410 and answer.json()["error"]["code"] == "expired"
    assert Entry.objects.filter(pk=held_id).exists()


def test_it_purges_a_thread_on_the_first_purge_after_its_release(agent):
    # given
    _, held_id = thread_of(agent)
    placed = hold(thread_id=held_id)
    purge_later()

    # when
    moderation.hold_release(actor="test", hold_id=placed.pk, reason="case closed")
    result = purge_later()

    # then
    assert result.counts["threads"] == 1
    assert counts()["entries"] == 0 and counts()["receipts"] == 0
    assert Tombstone.objects.count() == 1


def test_it_keeps_every_thread_a_held_principal_has_an_entry_in(agent, other_agent):
    # given: a thread of the agent's, another's thread it replied to, and a third
    _, own_id = thread_of(agent)
    _, answered_id = thread_of(other_agent)
    assert agent.post(reply(answered_id)).status_code == 201
    _, stranger_id = thread_of(other_agent)
    placed = hold(principal=agent.name)

    # when
    kept = purge_later()

    # then
    assert kept.counts["threads"] == 1
    assert set(Entry.objects.filter(type="question").values_list("id", flat=True)) == {
        own_id, answered_id,
    }
    moderation.hold_release(actor="test", hold_id=placed.pk, reason="done")
    assert purge_later().counts["threads"] == 2
    assert counts()["entries"] == 0


def test_it_takes_a_replys_id_as_naming_its_thread(agent):
    _, question_id = thread_of(agent)
    reply_id = agent.post(reply(question_id)).json()["id"]

    placed = hold(thread_id=reply_id)

    assert placed.thread_id == question_id


@pytest.mark.parametrize(
    "target, reason",
    [({"thread_id": 999999}, "abuse"), ({"principal": "nobody"}, "abuse"),
     ({"thread_id": None}, "   ")],
)
def test_it_refuses_an_unknown_target_or_a_blank_reason(agent, target, reason):
    if target == {"thread_id": None}:
        target = {"thread_id": thread_of(agent)[1]}

    with pytest.raises(HoldRefused):
        moderation.hold_add(actor="test", reason=reason, **target)

    assert not moderation.AuditEvent.objects.filter(action="hold_add").exists()


def test_a_held_entry_deleted_answers_as_deleted_and_keeps_its_text(agent, anonymous):
    # given
    payload, question_id = thread_of(agent)
    placed = hold(thread_id=question_id)

    # when
    moderation.entry_delete(actor="test", entry_id=question_id, reason="spam")

    # then: deleted for everyone but the administrators
    retry = agent.post(payload)
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"
    assert anonymous.get(f"/api/v1/threads/{question_id}").status_code == 404
    kept = Entry.objects.get(pk=question_id)
    assert kept.deleted_at is not None and not kept.visible
    assert kept.body == payload["body"] and kept.actor_name == payload["actor"]["name"]

    # and the first deletion purge after the release blanks it
    now = timezone.now()
    purge_deletion_records(now=now, batch_size=100)
    assert Entry.objects.get(pk=question_id).body == payload["body"]
    moderation.hold_release(actor="test", hold_id=placed.pk, reason="done")
    result = purge_deletion_records(now=now, batch_size=100)
    assert result.counts["texts"] == 1
    gone = Entry.objects.get(pk=question_id)
    assert (gone.body, gone.title, gone.actor_name) == ("", "", "")


def test_it_keeps_a_held_deleted_entrys_receipt_past_the_deletion_policy(agent):
    payload, question_id = thread_of(agent)
    hold(thread_id=question_id)
    moderation.entry_delete(actor="test", entry_id=question_id, reason="spam")

    result = purge_deletion_records(now=timezone.now() + LATER, batch_size=100)

    assert result.counts["receipts"] == 0
    assert Receipt.objects.filter(result_id=question_id, state="deleted").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_a_hold_committed_while_a_purge_runs_is_honoured_by_every_later_batch(agent):
    # given: many expired one-entry threads, purged one a batch
    past = timezone.now() - LATER
    ids = [
        board.entry_post(
            token=agent.token, address="127.0.0.1", fields=entry_fields_read(question()),
            route="api", now=past,
        ).entry.pk
        for _ in range(300)
    ]
    last = ids[-1]
    results = {}

    def purge():
        try:
            results["purge"] = purge_expired_threads(now=timezone.now(), batch_size=1)
        finally:
            connections.close_all()

    # when: the hold is committed on another connection once the purge has begun
    runner = threading.Thread(target=purge)
    runner.start()
    deadline = time.monotonic() + 30
    while Entry.objects.count() == len(ids) and time.monotonic() < deadline:
        time.sleep(0.005)
    hold(thread_id=last)
    remaining_at_hold = Entry.objects.count()
    runner.join(60)

    # then: the purge was still running, and the held thread is the one left
    assert 1 < remaining_at_hold < len(ids)
    assert list(Entry.objects.values_list("id", flat=True)) == [last]
    assert results["purge"].counts["threads"] == len(ids) - 1


def test_an_erasure_of_a_held_principal_keeps_the_text_until_the_release(agent, anonymous):
    # given: a held principal with a question and a reply
    payload, question_id = thread_of(agent)
    reply_id = agent.post(reply(question_id)).json()["id"]
    placed = hold(principal=agent.name)

    # when: its entries are erased
    erasure, _ = erasure_start(actor="test", name=agent.name, reason="spam flood")
    erasure_run(erasure_id=erasure.pk)

    # then: deleted for everyone, the text kept while held
    retry = agent.post(payload)
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"
    assert anonymous.get(f"/api/v1/threads/{question_id}").status_code == 404
    kept = Entry.objects.get(pk=question_id)
    assert kept.deleted_at is not None and kept.body == payload["body"]
    assert Entry.objects.get(pk=reply_id).deleted_at is not None

    # and the first deletion purge after the release blanks both
    moderation.hold_release(actor="test", hold_id=placed.pk, reason="done")
    result = purge_deletion_records(now=timezone.now(), batch_size=100)
    assert result.counts["texts"] == 2
    assert set(Entry.objects.values_list("body", flat=True)) == {""}


@pytest.mark.parametrize("holds", [("principal",), ("principal", "thread")])
def test_a_held_principals_thread_keeps_anothers_deleted_reply_past_the_deletion_policy(
    agent, other_agent, holds
):
    # given: the other agent's thread, which the held agent replied in, and a reply of
    # the other agent's that a moderator deleted
    _, question_id = thread_of(other_agent)
    assert agent.post(reply(question_id)).status_code == 201
    deleted = other_agent.post(reply(question_id)).json()["id"]
    moderation.entry_delete(actor="test", entry_id=deleted, reason="spam")
    moderation.retention_set(actor="test", policy="deletion", seconds=3600)
    if "principal" in holds:
        hold(principal=agent.name)
    if "thread" in holds:
        hold(thread_id=question_id)
    later = timezone.now() + timedelta(hours=2)  # the deletion is due, the thread is not

    # when
    report = forecast.purge_forecast(now=later)
    result = purge_deletion_records(now=later, batch_size=100)

    # then: the forecast counted it as held, and no tombstone replaced the deletion record
    assert report["purge-deletion-records"]["removed"] == 0
    assert report["purge-deletion-records"]["held"] == 1
    assert result.counts["receipts"] == 0
    assert Receipt.objects.filter(result_id=deleted, state="deleted").exists()
    assert Tombstone.objects.count() == 0


def test_the_forecast_counts_what_a_hold_keeps_back(agent):
    # given: two threads past expiry, one of them held
    _, held_id = thread_of(agent)
    thread_of(agent)
    hold(thread_id=held_id)

    # when
    report = forecast.purge_forecast(now=timezone.now() + LATER)

    # then: one thread's entry would go, the held one is counted as held, nothing changed
    assert report["purge-expired-threads"]["removed"] == 1
    assert report["purge-expired-threads"]["held"] == 1
    assert Entry.objects.count() == 2 and Receipt.objects.count() == 2
