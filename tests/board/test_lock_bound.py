"""Every transaction on PostgreSQL waits for a lock at most SETTLE_CLAIM_WAIT_SECONDS, set
inside the transaction (SET LOCAL, or the claim's own statement), so the bound holds
behind a pooler in transaction mode as well as on a direct connection
(docs/pgbouncer.md)."""

import time

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from board.models import Entry
from moderation import actions as moderation
from tests.conftest import question

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def other_connection() -> psycopg.Connection:
    params = connection.settings_dict
    return psycopg.connect(
        dbname=params["NAME"], user=params["USER"], host=params["HOST"],
        port=params["PORT"] or 5432, password=params["PASSWORD"] or None, autocommit=True,
    )


def test_it_gives_up_a_console_delete_when_another_session_holds_the_entry(agent, settings):
    # given: an entry whose row another session holds
    settings.SETTLE_CLAIM_WAIT_SECONDS = 1
    entry_id = agent.post(question()).json()["id"]
    holder = other_connection()
    holder.execute("BEGIN")
    holder.execute("SELECT 1 FROM board_entry WHERE id = %s FOR UPDATE", [entry_id])
    try:
        # when
        started = time.monotonic()
        with pytest.raises(DatabaseError) as raised:
            moderation.entry_delete(actor="operator", entry_id=entry_id, reason="spam")
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    # then: it waited about the bound, not for the holder, and changed nothing
    assert raised.value.__cause__.sqlstate == "55P03"
    assert 0.9 <= waited < 5
    assert Entry.objects.get(pk=entry_id).deleted_at is None


def test_it_sets_the_bound_inside_the_transaction_not_on_the_connection():
    # given: a connection with no startup option (what PgBouncer allows)
    connection.ensure_connection()

    with connection.cursor() as cursor:
        # then: outside a transaction the server default holds
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == "0"
        # and: inside one, the bound
        with transaction.atomic():
            cursor.execute("SHOW lock_timeout")
            assert cursor.fetchone()[0] == "5s"
