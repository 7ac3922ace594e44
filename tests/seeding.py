"""Thousands of entries at once, for the tests and the bench that need them (an erasure
of 10,000 entries, SPEC 8.4).

A post makes its rows in several round trips; 10,000 posts take one to two minutes on
the shared test machine, longer than the erase they set up. So the rows are made here
set-wise, but by the product's own code, so they cannot be rows no post would write:
the request is parsed by `entry_fields_read`, the entry's columns come from the write
path's `_entry_values`, the caller (scope, source, principal) from
`caller_authenticate`, the receipt's digests from `packed_digests` and its expiry from
the principal's entry retention; then one bulk insert per table and level (questions,
then their replies; receipts 4,000 a statement). `tests/moderation/test_erasure_seeding.py`
checks that a seeded entry and receipt equal what a post writes, and that a retry of one
replays. What a seeded post does not write: its rate-limit counts (nothing the erasure
reads).
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from board.posting import callers
from board.retention import policies as retention
from receipts.fingerprint import packed_digests
from receipts.models import Receipt
from tests.conftest import question, reply

POST_ENTRY = board.POST_ENTRY


@dataclass
class Seeded:
    """The entries made, and the payloads that made them (a retry sends one again)."""

    question_ids: list[int] = field(default_factory=list)
    reply_ids: list[int] = field(default_factory=list)
    payloads: dict[int, dict] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.question_ids) + len(self.reply_ids)


def entries_seed(
    *,
    token: str,
    count: int,
    replies_per_question: int = 9,
    route: str = "api",
    now: datetime | None = None,
) -> Seeded:
    """`count` entries of the token's principal, as posts at `now` write them: a question
    then `replies_per_question` replies under it, and so on."""
    now = now or timezone.now()
    caller = callers.caller_authenticate(token=token, address="127.0.0.1")
    life = retention.entry_retention_for(caller.principal)
    questions = -(-count // (replies_per_question + 1))
    seeded = Seeded()
    with transaction.atomic():
        asked = _level(caller, [question() for _ in range(questions)], route, now, life)
        seeded.question_ids = list(asked)
        payloads = [
            reply(parent)
            for parent in seeded.question_ids
            for _ in range(replies_per_question)
        ][: count - questions]
        answered = _level(caller, payloads, route, now, life)
        seeded.reply_ids = list(answered)
    seeded.payloads = asked | answered
    return seeded


# Receipts a statement: the binary column keeps Django from its one-array-a-column insert
# on PostgreSQL, so each row takes 13 parameters, and a statement holds at most 65,535.
RECEIPT_BATCH = 4_000


def _level(caller, payloads: list[dict], route: str, now: datetime, life: timedelta) -> dict:
    """Entries and receipts for these payloads, one bulk insert each; {id: payload}."""
    requests = [entry_fields_read(dict(payload)) for payload in payloads]
    # Distinct moments, as one post after another would have, in the order of the ids.
    moments = [now - timedelta(microseconds=len(requests) - n) for n in range(len(requests))]
    entries = Entry.objects.bulk_create(
        Entry(**board._entry_values(request, caller, route, moment))
        for request, moment in zip(requests, moments, strict=True)
    )
    Receipt.objects.bulk_create((
        Receipt(
            id=entry.pk,  # as a post's claim writes it: a receipt's id is its entry's
            scope=caller.scope,
            operation=POST_ENTRY,
            request_id=request.request_id,
            packed_digests=packed_digests(request.content()),
            state=Receipt.State.SUCCEEDED,
            result_id=entry.pk,
            first_route=route,
            attempts=1,
            first_seen_at=moment,
            receipt_expires_at=moment + life,
        )
        for request, entry, moment in zip(requests, entries, moments, strict=True)
    ), batch_size=RECEIPT_BATCH)
    return {entry.pk: payload for entry, payload in zip(entries, payloads, strict=True)}


def entries_at(ids: list[int], moments: list[datetime]) -> None:
    """Questions with these ids made at these moments: gaps in the ids (a purge, a
    rolled-back post) and creation times out of the ids' order, as no one test's posts
    would make them. No receipts."""
    Entry.objects.bulk_create(
        Entry(
            pk=pk, type=Entry.Type.QUESTION, title=f"question {pk}", body="body",
            actor_name="writer", submission_mode=Entry.SubmissionMode.AUTONOMOUS,
            route="api", source="test", created_at=moment,
        )
        for pk, moment in zip(ids, moments, strict=True)
    )
