"""The outbox: one delivery per enabled endpoint, written in the entry's transaction with
one statement; none for a replay; deletion applies the cancel rule in its transaction;
a broker outage never fails a post."""

import json
import logging
import os
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board import services as board
from board.celery import app
from board.entries.fields import entry_fields_read
from board.posting.callers import ANONYMOUS_SCOPE
from maintenance.deliveries import endpoints, outbox, sweep
from maintenance.deliveries.models import Delivery
from moderation import actions as moderation
from receipts.exceptions import RequestExpired
from receipts.fingerprint import Identity
from receipts.models import Tombstone
from tests.conftest import counts, issue_agent, question
from tests.maintenance.conftest import delivery_of, drive, endpoint_for, post_entry
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [pytest.mark.usefixtures("delivery_settings")]


def _endpoint(name: str, **extra):
    return endpoints.endpoint_add(name=name, url=f"https://{name}.example/hook", **extra)[0]


@pytest.mark.django_db(transaction=True)
def test_a_new_entry_writes_one_delivery_per_enabled_endpoint_in_one_statement():
    # given: two enabled endpoints and a disabled one
    first, second = _endpoint("first"), _endpoint("second")
    _endpoint("third")
    endpoints.endpoint_disable(name="third")

    # when
    with CaptureQueriesContext(connection) as queries:
        entry = post_entry()

    # then: one statement wrote both, accepted, with the entry's id; on PostgreSQL it is
    # the statement that writes the entry itself
    outbox_statements = [q["sql"] for q in queries if "maintenance_delivery" in q["sql"]]
    assert len(outbox_statements) == 1
    if connection.vendor == "postgresql":
        assert "INSERT INTO board_entry" in outbox_statements[0]
    rows = Delivery.objects.filter(entry_id=entry.pk)
    assert {row.endpoint_id for row in rows} == {first.pk, second.pk}
    assert {row.state for row in rows} == {"accepted"}
    assert len({row.pk for row in rows}) == 2
    # time-ordered ids (version 7): the first 48 bits are the delivery's moment in ms
    assert {(row.pk.version, row.pk.variant) for row in rows} == {(7, uuid.RFC_4122)}
    assert {row.pk.int >> 80 for row in rows} == {
        int(row.created_at.timestamp() * 1000) for row in rows
    }


@pytest.mark.django_db(transaction=True)
def test_a_post_refused_by_a_tombstone_writes_no_delivery():
    # given: an enabled endpoint, and the tombstone a purge left for this request_id
    _endpoint("first")
    payload = question()
    key = Identity(ANONYMOUS_SCOPE, board.POST_ENTRY, uuid.UUID(payload["request_id"])).key
    Tombstone.objects.create(
        key=key, reason=Tombstone.Reason.EXPIRED, expires_at=timezone.now() + timedelta(days=1)
    )

    with pytest.raises(RequestExpired):
        board.entry_post(
            token=None, address="127.0.0.1", fields=entry_fields_read(payload), route="api"
        )

    assert counts()["entries"] == 0
    assert Delivery.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_replay_writes_no_delivery():
    _endpoint("first")
    payload = question()

    fields = entry_fields_read(payload)
    created = board.entry_post(token=None, address="127.0.0.1", fields=fields, route="api")
    replayed = board.entry_post(token=None, address="127.0.0.1", fields=fields, route="api")

    assert replayed.replayed and replayed.entry.pk == created.entry.pk
    assert Delivery.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_post_that_rolls_back_leaves_no_delivery():
    from django.db import transaction

    _endpoint("first")
    with pytest.raises(RuntimeError), transaction.atomic():
        post_entry()
        raise RuntimeError("the entry's transaction fails after the outbox row")

    assert Delivery.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_deleting_an_entry_cancels_its_accepted_deliveries_in_the_same_transaction():
    _endpoint("first")
    entry = post_entry()

    moderation.entry_delete(actor="test", entry_id=entry.pk, reason="spam")

    delivery = delivery_of(entry)
    assert delivery.state == "cancelled" and delivery.settled_at is not None
    assert delivery.note == "entry deleted"


@pytest.mark.django_db(transaction=True)
def test_deleting_an_entry_whose_earlier_attempt_was_lost_makes_it_unknown(receiver):
    endpoint_for(receiver, supports="dedupe")
    receiver.script = [Behaviour(hang=True)]
    entry = post_entry()
    sweep.delivery_run(delivery_id=delivery_of(entry).pk)  # times out: accepted again
    assert delivery_of(entry).state == "accepted"

    moderation.entry_delete(actor="test", entry_id=entry.pk, reason="spam")

    # then: an earlier attempt may have landed, so it is not called cancelled
    assert delivery_of(entry).state == "outcome_unknown"


@pytest.mark.django_db(transaction=True)
def test_deleting_an_entry_while_its_delivery_runs_lets_the_attempt_settle_it(receiver):
    endpoint_for(receiver, supports="none")
    entry = post_entry()
    seen_state = []

    def delete_meanwhile():
        moderation.entry_delete(actor="test", entry_id=entry.pk, reason="spam")
        seen_state.append(delivery_of(entry).state)

    receiver.script = [Behaviour(status=503, before=delete_meanwhile)]

    delivery = drive(delivery_of(entry))

    # then: cancel_requested while in flight; the 503 would be retried, so it is cancelled
    assert seen_state == ["cancel_requested"]
    assert delivery.state == "cancelled"
    assert len(receiver.posts()) == 1


@pytest.mark.django_db(transaction=True)
def test_a_broker_outage_never_fails_a_post_and_the_sweep_sends_it_later(
    receiver, caplog, settings
):
    endpoint_for(receiver)
    # given: a broker nobody listens on (fresh pools for it, and back again after:
    # closing the real pools would break every later enqueue in this process). Celery
    # reads CELERY_BROKER_URL from the environment before its settings.
    saved_setting, saved_environment = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")

    def use_broker(url: str, environment: str | None) -> None:
        app.conf.broker_url = url
        if environment is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = environment
        app._pool = None
        app.amqp._producer_pool = None

    dead = "redis://127.0.0.1:1/0"
    use_broker(dead, dead if saved_environment is not None else None)
    try:
        with caplog.at_level(logging.WARNING, logger="maintenance.outbox"):
            posted = board.entry_post(
                token=None, address="127.0.0.1", fields=entry_fields_read(question()), route="api"
            )
            outbox.doorbell.flush()  # what its thread does within milliseconds
    finally:
        use_broker(saved_setting, saved_environment)

    # then: the post is saved, the failure logged by class only, the delivery waits
    assert posted.replayed is False
    delivery = delivery_of(posted.entry)
    assert delivery.state == "accepted"
    [record] = [r for r in caplog.records if "not queued" in r.getMessage()]
    assert "127.0.0.1:1" not in record.getMessage()
    # when: the minute sweep runs
    sweep.deliveries_sweep(inline=True)
    delivery.refresh_from_db()
    assert delivery.state == "succeeded"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("roomy_limits")
def test_the_write_path_budget_holds_with_two_endpoints_enabled():
    # given: two enabled endpoints and an agent whose token's last use is not due
    _endpoint("first"), _endpoint("second")
    agent = issue_agent("budget-with-endpoints")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    assert client.post("/api/v1/entries", json.dumps(question()),
                       content_type="application/json").status_code == 201

    # when: a new authenticated question over HTTP
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/api/v1/entries", json.dumps(question()),
                               content_type="application/json")

    # then: the board's own budget of 3 statements (issue 8 allowed 7; the outbox rows
    # are written in the entry's own statement), and both deliveries written in the
    # entry's own transaction
    sql = [query["sql"] for query in queries]
    assert response.status_code == 201
    assert len(sql) <= 3, sql
    entry_id = response.json()["id"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.xmin::text, d.xmin::text FROM board_entry e "
            "JOIN maintenance_delivery d ON d.entry_id = e.id WHERE e.id = %s",
            [entry_id],
        )
        written = cursor.fetchall()
    assert len(written) == 2
    assert all(entry_xid == delivery_xid for entry_xid, delivery_xid in written)
