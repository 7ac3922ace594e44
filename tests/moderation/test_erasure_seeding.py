"""The seeding the 10,000-entry erasure tests stand on (tests/seeding.py) writes what a
post writes: the same entry and receipt columns, and a retry of a seeded entry replays
through the real write path like any other."""

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from receipts.models import Receipt
from tests.conftest import Agent, issue_agent
from tests.seeding import entries_seed

pytestmark = pytest.mark.usefixtures("roomy_limits")

# What differs between two posts of equal content: who they are, and what points at whom.
NOT_COMPARED = {"id", "request_id", "result_id", "parent"}


def columns(instance) -> dict:
    row = model_to_dict(instance)
    return {name: value for name, value in row.items() if name not in NOT_COMPARED}


def test_a_seeded_entry_and_receipt_are_what_a_post_writes(db):
    # given: the same question and reply, seeded and posted at the same moment
    agent: Agent = issue_agent("spammer")
    now = timezone.now()
    seeded = entries_seed(token=agent.token, count=2, replies_per_question=1, now=now)
    asked, answered = (seeded.payloads[i] for i in (*seeded.question_ids, *seeded.reply_ids))
    posted_question = board.entry_post(
        token=agent.token, address="127.0.0.1", route="api", now=now,
        fields=entry_fields_read({**asked, "request_id": "0b0e0000-0000-4000-8000-000000000001"}),
    ).entry
    posted_reply = board.entry_post(
        token=agent.token, address="127.0.0.1", route="api", now=now,
        fields=entry_fields_read(
            {**answered, "request_id": "0b0e0000-0000-4000-8000-000000000002"}
        ),
    ).entry

    # then: column for column the same, but for the ids and the moments' microseconds
    for seeded_id, posted in ((seeded.question_ids[0], posted_question),
                              (seeded.reply_ids[0], posted_reply)):
        mine, theirs = Entry.objects.get(pk=seeded_id), Entry.objects.get(pk=posted.pk)
        created = mine.created_at
        assert abs(created - theirs.created_at).total_seconds() < 0.001
        mine.created_at = theirs.created_at
        assert columns(mine) == columns(theirs)
        mine_receipt = Receipt.objects.get(result_id=seeded_id)
        theirs_receipt = Receipt.objects.get(result_id=posted.pk)
        for moment in ("first_seen_at", "receipt_expires_at"):
            assert getattr(mine_receipt, moment) - created == (
                getattr(theirs_receipt, moment) - theirs.created_at
            )
            setattr(mine_receipt, moment, getattr(theirs_receipt, moment))
        assert columns(mine_receipt) == columns(theirs_receipt)
    assert Entry.objects.get(pk=seeded.reply_ids[0]).parent_id == seeded.question_ids[0]


def test_a_retry_of_a_seeded_entry_replays_through_the_write_path(db):
    agent: Agent = issue_agent("spammer")
    seeded = entries_seed(token=agent.token, count=10)

    for entry_id in (seeded.question_ids[0], seeded.reply_ids[-1]):
        retry = agent.post(seeded.payloads[entry_id])
        assert retry.status_code == 200, retry.content
        assert retry.json()["id"] == entry_id
        assert retry["Idempotent-Replayed"] == "true"
    assert (len(seeded.question_ids), len(seeded.reply_ids)) == (1, 9)
    assert Entry.objects.count() == Receipt.objects.count() == 10
