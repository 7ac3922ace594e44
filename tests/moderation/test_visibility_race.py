"""An unhide racing a delete must not leave a deleted entry visible (issue 8), with two
real threads, each on its own PostgreSQL connection.

The interleaving is made deterministic: the delete holds its transaction open until the
unhide is seen waiting on the entry's row lock (pg_stat_activity), so the unhide has
already read the entry as not deleted when the delete commits.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction

from board.models import Entry
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.conftest import backend_waits_on_a_lock, question

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_an_unhide_racing_a_delete_leaves_the_entry_deleted_and_hidden(
    anonymous, roomy_limits
):
    # given: a hidden entry
    entry_id = anonymous.post(question()).json()["id"]
    moderation.entry_hide(actor="first-moderator", entry_id=entry_id, reason="looks like spam")
    deleted, release = threading.Event(), threading.Event()

    def delete() -> None:
        try:
            with transaction.atomic():
                moderation.entry_delete(actor="first-moderator", entry_id=entry_id, reason="spam")
                deleted.set()
                release.wait(10)  # commit only once the unhide waits on the row
        finally:
            connection.close()

    def unhide() -> str:
        try:
            moderation.entry_unhide(
                actor="second-moderator", entry_id=entry_id, reason="not spam after all"
            )
            return "unhidden"
        except Entry.DoesNotExist:
            return "refused"
        finally:
            connection.close()

    # when: the unhide starts while the delete is uncommitted
    with ThreadPoolExecutor(max_workers=2) as pool:
        deleting = pool.submit(delete)
        assert deleted.wait(10)
        unhiding = pool.submit(unhide)
        try:
            assert backend_waits_on_a_lock(), "the unhide never waited for the delete's lock"
        finally:
            release.set()
        deleting.result(timeout=10)
        outcome = unhiding.result(timeout=10)

    # then
    entry = Entry.objects.get(pk=entry_id)
    assert outcome == "refused"
    assert (entry.visible, entry.deleted_at is not None) == (False, True)
    assert not AuditEvent.objects.filter(action="entry_unhide").exists()
    assert anonymous.get(f"/api/v1/threads/{entry_id}").status_code == 404
