"""An entry's principal exists, and stays: what the foreign key guaranteed, kept on
PostgreSQL by triggers that take no lock on the principal (board migration 0010,
board/sql/board_entry_principal_exists.sql, board/sql/board_principal_kept.sql). SQLite
keeps its real foreign key, checked at the commit."""

import json

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.test import Client
from django.utils import timezone

from board.models import AgentToken, Entry, Principal
from tests.conftest import issue_agent, question


def entry_by(principal_id: int) -> Entry:
    return Entry(
        type=Entry.Type.QUESTION, title="Who wrote this?", body="b", actor_name="someone",
        submission_mode="autonomous", route="api", source=f"principal:{principal_id}",
        principal_id=principal_id, created_at=timezone.now(),
    )


def no_such_principal() -> int:
    return (Principal.objects.aggregate(highest=Max("id"))["highest"] or 0) + 1000


# transaction=True: SQLite's foreign key is checked when the transaction commits.
@pytest.mark.django_db(transaction=True)
def test_an_entry_naming_no_principal_is_refused_and_nothing_is_stored():
    issue_agent("a-real-agent")
    missing = no_such_principal()

    with pytest.raises(IntegrityError), transaction.atomic():
        entry_by(missing).save()

    assert not Entry.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db
def test_an_entry_cannot_be_moved_to_no_principal():
    issue_agent("first-owner")
    entry = entry_by(Principal.objects.get(name="first-owner").id)
    entry.save()

    with pytest.raises(IntegrityError), transaction.atomic():
        Entry.objects.filter(pk=entry.pk).update(principal_id=no_such_principal())

    assert Entry.objects.get(pk=entry.pk).principal.name == "first-owner"


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_principal_is_never_deleted_even_with_no_entries():
    # No entry names it, so the foreign key would have let it go; principals stay anyway
    # (a deletion cannot see an entry naming it that is not committed yet).
    issue_agent("kept-agent")
    principal = Principal.objects.get(name="kept-agent")

    with pytest.raises(IntegrityError), transaction.atomic():
        principal.delete()

    assert Principal.objects.filter(pk=principal.pk).exists()
    assert AgentToken.objects.filter(principal=principal).exists()


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_principals_id_never_changes():
    issue_agent("steady-agent")
    principal = Principal.objects.get(name="steady-agent")

    with pytest.raises(IntegrityError), transaction.atomic():
        Principal.objects.filter(pk=principal.pk).update(id=no_such_principal())

    assert Principal.objects.get(name="steady-agent").pk == principal.pk


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_principal_whose_other_fields_change_stays_itself():
    issue_agent("limited-agent")
    principal = Principal.objects.get(name="limited-agent")

    principal.hourly_limit = 7
    principal.save()

    assert Principal.objects.get(pk=principal.pk).hourly_limit == 7


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_post_by_a_principal_is_saved_under_it():
    agent = issue_agent("posting-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")

    response = client.post("/api/v1/entries", json.dumps(question()),
                           content_type="application/json")

    assert response.status_code == 201
    assert Entry.objects.get(pk=response.json()["id"]).principal.name == "posting-agent"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_post_writes_no_lock_into_its_principals_row():
    # The foreign key's check (at the post's commit) locked the principal's row FOR KEY
    # SHARE: PostgreSQL records such a lock in the row (its xmax: the locker), so in the
    # WAL, 54 bytes every new post. (Issuing the token locked it once already.)
    agent = issue_agent("unlocked-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    locker_before = principal_row_locker("unlocked-agent")

    response = client.post("/api/v1/entries", json.dumps(question()),
                           content_type="application/json")

    assert response.status_code == 201
    assert principal_row_locker("unlocked-agent") == locker_before


def principal_row_locker(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT xmax::text FROM board_principal WHERE name = %s", [name])
        return cursor.fetchone()[0]


# The tables whose foreign keys PostgreSQL makes TRUNCATE board_principal take along.
PRINCIPALS_AND_THEIRS = "board_principal, board_agenttoken, board_hold, moderation_erasure"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_principals_are_not_emptied_from_under_their_entries():
    issue_agent("truncated-agent")
    entry_by(Principal.objects.get(name="truncated-agent").id).save()

    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {PRINCIPALS_AND_THEIRS}")

    assert Principal.objects.filter(name="truncated-agent").exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_principals_are_emptied_together_with_the_entries():
    # As Django's flush empties every table between tests that ask for it.
    issue_agent("flushed-agent")
    entry_by(Principal.objects.get(name="flushed-agent").id).save()

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {PRINCIPALS_AND_THEIRS}, board_entry")

    assert not Principal.objects.exists()
    assert not Entry.objects.exists()
