"""Erasing a principal's entries (SPEC 8.4): the `erase` command and the service behind it."""

from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from board.models import Entry
from board.services import entry_delete, entry_set_visible
from moderation import erasure
from moderation.actions import COMMAND_LINE
from moderation.models import AuditEvent, Erasure
from receipts.models import Receipt
from tests.conftest import counts, question, reply
from tests.maintenance.conftest import delivery_settings  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("roomy_limits")


def erase(*args: str) -> str:
    out = StringIO()
    call_command("erase", *args, stdout=out)
    return out.getvalue().strip()


def _posted(agent, payload) -> tuple[int, dict]:
    response = agent.post(payload)
    assert response.status_code == 201
    return response.json()["id"], payload


def test_it_erases_every_entry_of_the_principal_as_operator_deletes(agent, other_agent):
    # given: the agent's two questions and a reply, one hidden, one already deleted; the
    # other agent's reply under the agent's question
    q1, q1_payload = _posted(agent, question())
    q2, _ = _posted(agent, question())
    r1, r1_payload = _posted(agent, reply(q2))
    gone, _ = _posted(agent, reply(q2))
    theirs, _ = _posted(other_agent, reply(q1))
    entry_set_visible(entry_id=q2, visible=False)
    entry_delete(entry_id=gone)
    before = counts()

    # when
    line = erase("agent", "--reason", "spam flood", "--batch-size", "2")

    # then: three erased (the deleted one not counted), rows and receipts kept, marked
    assert line == "erased 3 entries (2 questions, 1 replies)"
    assert counts() == before
    for entry_id in (q1, q2, r1):
        entry = Entry.objects.get(pk=entry_id)
        assert entry.deleted_at is not None and entry.body == "" and entry.actor_name == ""
        assert Receipt.objects.get(result_id=entry_id).state == Receipt.State.DELETED
    assert Entry.objects.get(pk=theirs).deleted_at is None  # others' replies stay
    for payload in (q1_payload, r1_payload):
        retry = agent.post(payload)
        assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"
    assert agent.get(f"/api/v1/threads/{q1}").status_code == 404  # thread left reads
    stored = Erasure.objects.get()
    assert (stored.state, stored.total, stored.done, stored.questions, stored.replies) == (
        "finished", 3, 3, 2, 1
    )


def test_it_audits_one_event_at_the_start_and_one_at_the_end(agent):
    _posted(agent, question())
    AuditEvent.objects.all().delete()

    erase("agent", "--reason", "asked to be forgotten")

    start, end = AuditEvent.objects.order_by("id")
    assert (start.action, start.reason) == ("erase_start", "asked to be forgotten")
    assert start.details["name"] == "agent" and start.details["total"] == 1
    assert end.action == "erase_end"
    assert (end.details["done"], end.details["questions"], end.details["replies"]) == (1, 1, 0)


def test_since_takes_only_entries_created_at_or_after_it(agent):
    old, _ = _posted(agent, question())
    cut = timezone.now()
    Entry.objects.filter(pk=old).update(created_at=cut - timedelta(hours=1))
    new, _ = _posted(agent, question())

    line = erase("agent", "--reason", "leak", "--since", cut.isoformat().replace("+00:00", "Z"))

    assert line == "erased 1 entries (1 questions, 0 replies)"
    assert Entry.objects.get(pk=old).deleted_at is None
    assert Entry.objects.get(pk=new).deleted_at is not None


@pytest.mark.parametrize(
    "written", ["Z", "+02:00", "-05:30"], ids=["z", "east-offset", "west-offset"]
)
def test_since_takes_an_entry_created_at_exactly_that_moment_in_any_offset(agent, written):
    # given: three entries, created a microsecond before, at, and after the cut
    cut = timezone.now().replace(microsecond=500_000) - timedelta(minutes=5)
    before, at, after = (_posted(agent, question())[0] for _ in range(3))
    for entry_id, moment in ((before, cut - timedelta(microseconds=1)), (at, cut),
                             (after, cut + timedelta(microseconds=1))):
        Entry.objects.filter(pk=entry_id).update(created_at=moment)
    offset = timedelta(hours=0) if written == "Z" else timedelta(
        hours=int(written[1:3]), minutes=int(written[4:6])
    ) * (1 if written[0] == "+" else -1)
    local = (cut + offset).replace(tzinfo=None).isoformat()

    # when: --since the cut, written in that offset
    line = erase("agent", "--reason", "leak", "--since", local + written)

    # then: at and after, not before
    assert line == "erased 2 entries (2 questions, 0 replies)"
    assert Entry.objects.get(pk=before).deleted_at is None
    assert Entry.objects.get(pk=at).deleted_at is not None
    assert Entry.objects.get(pk=after).deleted_at is not None


def test_revoke_tokens_revokes_the_principals_tokens_in_the_same_action(agent):
    _posted(agent, question())

    erase("agent", "--reason", "leaked token", "--revoke-tokens")

    assert agent.post(question()).status_code == 401
    assert AuditEvent.objects.get(action="erase_start").details["tokens_revoked"] == 1


def test_a_dry_run_prints_the_counts_and_changes_nothing(agent):
    q, _ = _posted(agent, question())
    _posted(agent, reply(q))
    before, events = counts(), AuditEvent.objects.count()

    line = erase("agent", "--reason", "check", "--dry-run", "--revoke-tokens")

    assert line == "would erase 2 entries (1 questions, 1 replies)"
    assert counts() == before and AuditEvent.objects.count() == events
    assert not Entry.objects.filter(deleted_at__isnull=False).exists()
    assert not Erasure.objects.exists()
    assert agent.post(question()).status_code == 201


@pytest.mark.parametrize(
    "args, message",
    [
        (["agent"], "reason"),
        (["agent", "--reason", "   "], "reason"),
        (["nobody", "--reason", "spam"], "nobody"),
        (["agent", "--reason", "spam", "--since", "yesterday"], "--since"),
        (["agent", "--reason", "spam", "--since", "2026-01-01T00:00:00"], "offset"),
        (["agent", "--reason", "spam", "--since", "0001-01-01T00:00:00+01:00"], "years"),
    ],
)
def test_a_refusal_exits_non_zero_with_one_line_and_changes_nothing(agent, args, message):
    _posted(agent, question())
    before, events = counts(), AuditEvent.objects.count()

    with pytest.raises(CommandError) as refused:
        erase(*args)

    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert counts() == before and AuditEvent.objects.count() == events
    assert not Erasure.objects.exists()


def test_a_second_start_while_one_runs_joins_it_and_reports_its_counts(agent):
    # given: an erasure started (by the console) whose worker has not run yet
    for _ in range(3):
        _posted(agent, question())
    first, created = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    assert created

    # when: the command starts one for the same principal
    again, created_again = erasure.erasure_start(actor="cli", name="agent", reason="spam")
    line = erase("agent", "--reason", "spam too")

    # then: it joined the running one: one record, one start event, its counts
    assert (again.pk, created_again) == (first.pk, False)
    assert line == "erased 3 entries (3 questions, 0 replies)"
    assert Erasure.objects.count() == 1
    assert AuditEvent.objects.filter(action="erase_start").count() == 1
    assert AuditEvent.objects.filter(action="erase_end").count() == 1


def test_a_second_start_with_revoke_tokens_revokes_them_though_it_joins(agent):
    # given: an erasure running without revoking (the console's, say)
    _posted(agent, question())
    erasure.erasure_start(actor="admin", name="agent", reason="spam")

    # when: the command joins it, asking to revoke the agent's tokens
    line = erase("agent", "--reason", "leaked token", "--revoke-tokens")

    # then: the tokens are revoked (audited), and the erasure is still one
    assert line == "erased 1 entries (1 questions, 0 replies)"
    assert agent.post(question()).status_code == 401
    revoked = AuditEvent.objects.get(action="token_revoke")
    assert (revoked.actor, revoked.reason, revoked.details["revoked"]) == (
        COMMAND_LINE, "leaked token", 1
    )
    assert AuditEvent.objects.filter(action="erase_start").count() == 1


def test_a_run_taken_up_after_a_crash_finishes_with_each_entry_counted_once(agent):
    # given: an erasure whose runner died after its first batch (the batch committed)
    for _ in range(5):
        _posted(agent, question())
    started, _ = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    ids = sorted(Entry.objects.values_list("id", flat=True))
    assert erasure._batch(started, 2, 0) == ids[1]
    assert Erasure.objects.get().done == 2

    # when: it is run again
    finished = erasure.erasure_run(erasure_id=started.pk, batch_size=2)

    # then
    assert (finished.state, finished.done, finished.total) == ("finished", 5, 5)
    assert Entry.objects.filter(deleted_at__isnull=True).count() == 0
    assert AuditEvent.objects.filter(action="erase_end").count() == 1


def test_a_stale_running_erasure_is_listed_for_resumption(agent):
    _posted(agent, question())
    started, _ = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    assert erasure.erasures_stale() == []
    assert erasure.erasures_stale(now=timezone.now() + timedelta(minutes=3)) == [started.pk]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_an_erased_entrys_accepted_deliveries_are_cancelled(agent):
    from maintenance.deliveries import endpoints
    from maintenance.deliveries.models import Delivery

    # given: an endpoint, so each new entry has an accepted delivery
    endpoints.endpoint_add(name="hooks", url="https://hooks.example/hook")
    entry_id, _ = _posted(agent, question())
    assert Delivery.objects.get(entry_id=entry_id).state == "accepted"

    # when
    erase("agent", "--reason", "spam")

    # then: the cancel rule, as an operator delete applies it
    delivery = Delivery.objects.get(entry_id=entry_id)
    assert delivery.state == "cancelled" and delivery.settled_at is not None
    assert delivery.note == "entry deleted"


@pytest.mark.postgres
def test_it_leaves_no_writer_turn_file_on_postgresql(agent):
    # given: the agent's question; no turn file beside the database's name
    _posted(agent, question())
    turn_file = Path(f"{connection.settings_dict['NAME']}-writers")
    turn_file.unlink(missing_ok=True)

    # when
    erase("agent", "--reason", "spam flood")

    # then: the turn is SQLite's (writers of one file); PostgreSQL's batches lock rows and
    # write nothing into the working folder
    assert not turn_file.exists()


def test_past_the_console_count_bound_the_command_counts_and_prints_exactly(
    agent, monkeypatch
):
    # given: the console's count bound lowered to 3, and 2 questions and 3 replies
    from moderation import selectors

    monkeypatch.setattr(selectors, "COUNT_BOUND", 3)
    q, _ = _posted(agent, question())
    _posted(agent, question())
    for _ in range(3):
        _posted(agent, reply(q))

    # when
    dry = erase("agent", "--reason", "spam", "--dry-run")
    line = erase("agent", "--reason", "spam")

    # then: the same lines as under the bound, and the exact total at the start
    assert dry == "would erase 5 entries (2 questions, 3 replies)"
    assert line == "erased 5 entries (2 questions, 3 replies)"
    assert Erasure.objects.get().total == 5
    assert AuditEvent.objects.get(action="erase_start").details["total"] == 5


def test_a_total_counted_by_the_runner_leaves_out_entries_posted_after_the_start(
    agent, monkeypatch
):
    # given: an erasure started past the bound (lowered to 1), its total not yet counted
    from moderation import selectors

    monkeypatch.setattr(selectors, "COUNT_BOUND", 1)
    for _ in range(2):
        _posted(agent, question())
    started, _ = erasure.erasure_start(actor="admin", name="agent", reason="spam")
    assert started.total is None

    # when: the agent posts again before the worker runs it
    later, _ = _posted(agent, question())
    finished = erasure.erasure_run(erasure_id=started.pk)

    # then: the total is the entries at the start, and the later one stays
    assert (finished.total, finished.done) == (2, 2)
    assert AuditEvent.objects.get(action="erase_start").details["total"] == 2
    assert Entry.objects.get(pk=later).deleted_at is None
