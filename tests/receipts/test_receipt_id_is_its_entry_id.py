"""A new receipt's id is its entry's id (SPEC 12.1: a post writes no entry in an index on
`result_id`, docs/write-path.md), and a receipt made before, whose id differs, is still
found by every path that asks for the receipt of an entry: the reply's guard, a retry
after the entry's deletion (410), the thread purge's tombstones, the console's link to
the operation, the expiring rollup."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from board.models import Entry
from maintenance.expiring import expiring_by_day, expiring_roll_up
from maintenance.purges import purge_expired_threads
from receipts.models import Receipt, Tombstone
from receipts.services import Identity
from tests.conftest import question, reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]


@pytest.fixture
def console(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def receipt_of(payload: dict) -> Receipt:
    return Receipt.objects.get(request_id=payload["request_id"])


def made_before(payload: dict) -> Receipt:
    """The request's receipt as the code before this change left it: an id of its own
    (the receipts' own sequence, which ran beside the entries'), its entry's id in
    result_id only."""
    receipt = receipt_of(payload)
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM receipts_receipt")
        own = cursor.fetchone()[0] + 1000
        cursor.execute("UPDATE receipts_receipt SET id = %s WHERE id = %s", [own, receipt.id])
    older = receipt_of(payload)
    assert older.id != older.result_id == receipt.result_id
    return older


def test_a_new_questions_and_replys_receipts_have_their_entries_ids(agent):
    asked = question()
    question_id = agent.post(asked).json()["id"]
    answered = reply(question_id)
    reply_id = agent.post(answered).json()["id"]

    assert (receipt_of(asked).id, receipt_of(asked).result_id) == (question_id, question_id)
    assert (receipt_of(answered).id, receipt_of(answered).result_id) == (reply_id, reply_id)


def test_a_receipt_made_any_other_way_never_takes_the_id_a_post_claims(agent):
    # given: receipts and entries made through the ORM between posts, as tests and
    # seeding make them
    first = agent.post(question()).json()["id"]
    other = Receipt.objects.create(
        scope="elsewhere", operation="other:v1", request_id=question()["request_id"],
        first_route="api", first_seen_at=timezone.now(), last_seen_at=timezone.now(),
        receipt_expires_at=timezone.now() + timedelta(days=1),
    )
    made = Entry.objects.create(**{**Entry.objects.values().get(pk=first), "id": None})

    # when
    asked = question()
    response = agent.post(asked)

    # then: the post's id is its own, above all of them, and its receipt's
    assert response.status_code == 201
    posted = response.json()["id"]
    assert posted > max(first, other.id, made.id)
    assert receipt_of(asked).id == posted


def test_a_reply_to_a_question_whose_receipt_was_made_before_is_accepted(agent):
    asked = question()
    question_id = agent.post(asked).json()["id"]
    made_before(asked)

    response = agent.post(reply(question_id))

    assert response.status_code == 201


def test_a_retry_after_the_deletion_of_an_entry_whose_receipt_was_made_before_is_410(
    agent, console
):
    asked = question()
    entry_id = agent.post(asked).json()["id"]
    made_before(asked)

    console.post(f"/console/entries/{entry_id}/delete", {"reason": "abuse"})
    retry = agent.post(asked)

    assert receipt_of(asked).state == Receipt.State.DELETED
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"


def test_the_purge_leaves_tombstones_of_receipts_made_before(agent):
    # given: a thread whose question's receipt was made before, its reply's after
    asked = question()
    question_id = agent.post(asked).json()["id"]
    answered = reply(question_id)
    agent.post(answered)
    receipts = [made_before(asked), receipt_of(answered)]

    # when
    result = purge_expired_threads(now=timezone.now() + timedelta(days=31), batch_size=100)

    # then: both receipts became tombstones
    assert result.counts == {"threads": 1, "entries": 2, "receipts": 2, "tombstones": 2}
    assert not Receipt.objects.exists()
    for receipt in receipts:
        assert Tombstone.objects.filter(
            key=Identity(receipt.scope, receipt.operation, receipt.request_id).key
        ).exists()


def test_the_console_links_an_entry_whose_receipt_was_made_before_to_its_operation(
    agent, console
):
    asked = question()
    agent.post(asked)
    made_before(asked)

    page = console.get("/console/entries/").content.decode()

    assert f"/console/operations/?request_id={asked['request_id']}" in page


def test_the_expiring_rollup_counts_receipts_made_before(agent, time_machine):
    # given: a run that counted one post, then a post in its next minute whose receipt
    # was made before
    noon = datetime(2030, 3, 10, 12, 0, 30, tzinfo=UTC)
    time_machine.move_to(noon - timedelta(minutes=1), tick=False)
    agent.post(question())
    expiring_roll_up(now=noon)
    asked = question()
    time_machine.move_to(noon + timedelta(seconds=10), tick=False)
    agent.post(asked)
    made_before(asked)

    # when
    expiring_roll_up(now=noon + timedelta(minutes=1))

    # then: both are on their expiry day
    days = {f"{day:%Y-%m-%d}": n for day, n in expiring_by_day(now=noon + timedelta(minutes=2))
            if n}
    assert days == {"2030-04-09": 2}


@pytest.mark.django_db(transaction=True)
def test_after_the_migration_a_post_never_claims_the_id_of_a_receipt_made_before(agent):
    # given: the schema before receipts' ids were their entries', and receipts made then
    # with ids past any entry's (the receipts' own sequence had run ahead)
    call_command("migrate", "receipts", "0008", verbosity=0)
    try:
        now = timezone.now()
        request_id = Receipt._meta.get_field("request_id")
        with connection.cursor() as cursor:
            for n, id_ in enumerate([4998, 4999, 5000]):
                cursor.execute(
                    "INSERT INTO receipts_receipt (id, scope, operation, request_id, state,"
                    " result_id, first_route, attempts, first_seen_at, last_seen_at,"
                    " receipt_expires_at) VALUES (%s, 'before', 'post_entry:v1', %s,"
                    " 'succeeded', %s, 'api', 1, %s, %s, %s)",
                    [id_, request_id.get_db_prep_value(uuid.uuid4(), connection), n + 1,
                     now, now, now + timedelta(days=1)],
                )
    finally:
        call_command("migrate", verbosity=0)

    # when
    asked = question()
    response = agent.post(asked)

    # then
    assert response.status_code == 201
    assert receipt_of(asked).id == response.json()["id"] > 5000
