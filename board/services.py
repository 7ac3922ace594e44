"""The board's rules, one function each, called by the API, MCP, console and commands.

`entry_post` is SPEC 5.1 in code: the checks run in the contract's order, and each
refusal is a BoardError or ReceiptError that the routes translate with `error_answer`.
"""

import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, transaction
from django.db.models import Case, Value, When
from django.utils import timezone

from board.entries import signals
from board.entries.fields import EntryFields, RefusedShape
from board.exceptions import (
    BoardError,
    ParentUnavailable,
    PostingPaused,
    RateLimited,
)
from board.models import AgentToken, Entry, PostingPolicy, Principal
from board.posting import callers, engines, limits, statements
from board.posting.callers import Caller
from board.retention import holds
from board.retention import policies as retention
from board.serving import replicas
from receipts import services as receipts
from receipts.models import Attempt, Receipt

log = logging.getLogger(__name__)

POST_ENTRY = "post_entry:v1"
TOKEN_PREFIX = "settle_"


# --- Principals and tokens --------------------------------------------------------------


def token_issue(
    *, name: str, hourly_limit: int | None = None, entry_retention: int | None = None
) -> tuple[Principal, str]:
    """Add a token for NAME (made if new). The token is returned once and stored hashed.
    `entry_retention` (seconds, checked by the caller against board.retention.policies.BOUNDS)
    sets the principal's own entry retention."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        principal, _ = Principal.objects.get_or_create(name=name)
        if hourly_limit is not None:
            principal.hourly_limit = hourly_limit
            principal.save(update_fields=["hourly_limit"])
        if entry_retention is not None:
            principal.entry_retention = entry_retention
            principal.save(update_fields=["entry_retention"])
        AgentToken.objects.create(
            principal=principal, token_hash=callers.token_hash(token), prefix=token[:12]
        )
    return principal, token


def token_revoke(*, name: str, now: datetime | None = None) -> int:
    """Revoke every live token of NAME; returns how many were revoked."""
    return AgentToken.objects.filter(principal__name=name, revoked_at__isnull=True).update(
        revoked_at=now or timezone.now()
    )


def _token_touch(caller: Caller, now: datetime) -> None:
    # After a post that succeeded only (SPEC 5.1: refusals write nothing but their count).
    # A minute's precision is all an operator needs to see which tokens are in use, so it
    # writes at most once a minute a token. Best effort: a busy database must not turn a
    # saved post into an error.
    if caller.token_id is None:
        return
    if caller.token_used_at is not None and now - caller.token_used_at <= timedelta(minutes=1):
        return
    try:
        statements.token_touch(token_id=caller.token_id, now=now)
    except DatabaseError as error:
        log.warning("token last-use write failed: %s", type(error).__name__)


# --- Posting policy: the switch and the hourly limits -----------------------------------


def posting_policy_current() -> PostingPolicy:
    return PostingPolicy.objects.filter(pk=1).first() or PostingPolicy(pk=1)


def posting_pause(*, reason: str) -> PostingPolicy:
    policy, _ = PostingPolicy.objects.update_or_create(
        pk=1, defaults={"paused": True, "pause_reason": reason}
    )
    return policy


def posting_resume(*, reason: str) -> PostingPolicy:
    policy, _ = PostingPolicy.objects.update_or_create(
        pk=1, defaults={"paused": False, "pause_reason": ""}
    )
    return policy


def posting_set_limits(
    *, source_hourly_limit: int | None, overall_hourly_limit: int | None
) -> PostingPolicy:
    """Set the console's limits; None falls back to the environment's default."""
    policy, _ = PostingPolicy.objects.update_or_create(
        pk=1,
        defaults={
            "source_hourly_limit": source_hourly_limit,
            "overall_hourly_limit": overall_hourly_limit,
        },
    )
    return policy


# --- Posting an entry (SPEC 5.1) --------------------------------------------------------


@dataclass(frozen=True)
class PostedEntry:
    entry: Entry
    receipt: Receipt
    replayed: bool
    source: str  # the caller's: whose reads must now see this entry (board/serving/replicas.py)


def entry_post(
    *,
    token: str | None,
    address: str,
    fields: EntryFields | RefusedShape,
    route: str,
    now: datetime | None = None,
) -> PostedEntry:
    """SPEC 5.1, a post as its door read it (the fields, or the refusal of their shape:
    board.entries.fields), its steps in the contract's order. Each refusal is a BoardError
    or ReceiptError that the routes answer through board.exceptions.error_answer.

    Round trips on PostgreSQL for a new question (tests/board/test_statement_budget.py):
    two. The admission: one autocommit statement that reads the token and the policy,
    counts, takes from the overall limit provisionally and looks for a committed
    receipt; its counters commit at once, so no post holds a counter's row while its
    entry commits. Then the write: the claim (which reserves the entry's id) and the
    entry with its attempt log and the outbox's rows, two statements sent together in
    one transaction with exactly one durable commit (receipts/engines/postgresql.py
    `write`). A replay: the admission and one autocommit statement. On SQLite the
    post's writes take their turn after the caller is read (board/posting/writer_turn.py).
    """
    now = now or timezone.now()
    # Step 1: the token, then the request's shape; a refusal writes only its count.
    if isinstance(fields, RefusedShape):
        callers.post_refusal_count(token=token, address=address, now=now)
        raise fields.error
    with engines.for_connection().writer_turn():
        # Step 1's token check and step 2's count, in one statement with step 5's take.
        admitted = callers.post_admit(
            token=token, address=address, operation=POST_ENTRY,
            request_id=fields.request_id, now=now,
        )
        caller, policy, taken = admitted.caller, admitted.policy, admitted.taken
        asked = {
            "identity": receipts.Identity(
                scope=caller.scope, operation=POST_ENTRY, request_id=fields.request_id
            ),
            "content": fields.content(),
            "route": route,
            "now": now,
        }
        with limits.overall_take(taken.overall, now) as overall:
            # Step 2: every attempt counts, retries included; what it refuses does not.
            if not taken.source:
                _attempt_rate_limited(asked)
                raise RateLimited(limit="source", retry_after=limits.seconds_to_next_hour(now))
            # Step 3: a request whose receipt is committed is answered from it.
            settled = receipts.receipt_replay(**asked, model=Entry) if taken.seen else None
            if settled is None:
                # Steps 4 to 7 in the claim's transaction, a tombstone answering first.
                companions = []  # what other apps write with it (board/entries/signals.py)
                for _, companion in signals.entry_companions.send(sender=Entry, now=now):
                    if companion is not None:
                        companions.append(companion)
                settled = receipts.receipt_write(
                    **asked,
                    retention=retention.entry_retention_for(caller.principal),
                    effect=receipts.Effect(
                        model=Entry,
                        values=_entry_values(fields, caller, route, now),
                        companions=companions,
                    ),
                    refusal=_refusal_before_claim(policy, overall, now),
                    guard=_parent_open(fields, now) if fields.type == Entry.Type.REPLY else None,
                )
                if settled is not None:  # committed: the outbox rings for its sends
                    for companion, rows in zip(companions, settled.returned, strict=True):
                        if rows:
                            companion.made(rows)
            if settled is None:  # committed while this claim waited
                settled = receipts.receipt_replay(**asked, model=Entry, after_lost_claim=True)
            overall.kept = not settled.replayed
        _token_touch(caller, now)
    return PostedEntry(
        entry=settled.result, receipt=settled.receipt, replayed=settled.replayed,
        source=caller.source,
    )


def _attempt_rate_limited(asked: dict) -> None:
    receipts.attempt_record(
        identity=asked["identity"], route=asked["route"],
        outcome=Attempt.Outcome.RATE_LIMITED, now=asked["now"],
    )


def _refusal_before_claim(
    policy: PostingPolicy, overall: limits.OverallTake, now: datetime
) -> BoardError | None:
    """Steps 4 and 5, known before the claim; the engine answers them after the claim's
    tombstone check (step 3 first). `policy` was read as the call arrived: a pause that
    lands meanwhile did not exist when the agent asked, so it is judged without."""
    if policy.paused:
        return PostingPaused(reason=policy.pause_reason)
    if overall.refused or not (overall.taken or overall.take(policy)):
        return RateLimited(limit="overall", retry_after=limits.seconds_to_next_hour(now))
    return None


def _parent_open(fields: EntryFields, now: datetime) -> receipts.Guard:
    """Step 6 as a reply's guard: its parent is a public question whose receipt has not
    expired, read (and on PostgreSQL held against the purge) in the write's own
    transaction: board/posting/engines/."""
    return engines.for_connection().question_open(
        parent_id=fields.parent_id, operation=POST_ENTRY, now=now, error=ParentUnavailable()
    )


def _entry_values(fields: EntryFields, caller: Caller, route: str, now: datetime) -> dict:
    return {
        "type": fields.type,
        "parent_id": fields.parent_id,
        "title": fields.title,
        "body": fields.body,
        "actor_name": fields.actor.name,
        "actor_model": fields.actor.model,
        "actor_trigger": fields.actor.trigger,
        "submission_mode": fields.submission_mode,
        "visible": True,
        "deleted_at": None,
        "route": route,
        # A principal's source is its key, which principal_id says: stored empty, the
        # entry's row is 8 to 16 bytes shorter (Entry.caller_source reads it back).
        "source": "" if caller.principal else caller.source,
        "principal_id": caller.principal.pk if caller.principal else None,
        "created_at": now,
    }


def request_id_new() -> uuid.UUID:
    return uuid.uuid4()


# --- Moderation of entries ---------------------------------------------------------------


def entry_set_visible(*, entry_id: int, visible: bool) -> Entry:
    """Hide or unhide a live entry; Entry.DoesNotExist if it is deleted or absent.

    One conditional UPDATE, not a read then a write: an unhide that read the entry just
    before a delete committed would otherwise set `visible` on the deleted row. Waiting
    on the delete's row lock, PostgreSQL re-checks `deleted_at IS NULL` on the row the
    delete left and changes nothing; SQLite runs one writer at a time.
    """
    with transaction.atomic():
        changed = Entry.objects.filter(pk=entry_id, deleted_at__isnull=True).update(
            visible=visible
        )
        if not changed:
            raise Entry.DoesNotExist(f"no live entry has id {entry_id}")
        transaction.on_commit(replicas.visibility_changed)
        return Entry.objects.get(pk=entry_id)


def entry_delete(*, entry_id: int, now: datetime | None = None) -> Entry:
    """Remove an entry's text and actor; its receipt stays, marked deleted, so a retry
    answers `410 deleted` instead of recreating it. Call inside the caller's transaction
    when other records (deliveries, audit) must change with it."""
    now = now or timezone.now()
    with transaction.atomic():
        entry = Entry.objects.select_for_update().get(pk=entry_id, deleted_at__isnull=True)
        # A held entry keeps its text and actor, for administrators only, until no hold
        # covers its thread (SPEC 8.2); the deletion purge blanks them after the release.
        if not holds.thread_is_held(entry.thread_id):
            entries_text_blank(Entry.objects.filter(pk=entry.pk))
        Entry.objects.filter(pk=entry.pk).update(visible=False, deleted_at=now)
        entry.refresh_from_db()
        receipts.receipt_mark_deleted(
            operation=POST_ENTRY,
            result_ids=[entry.pk],
            now=now,
        )
        signals.entry_deleted.send(sender=Entry, entry=entry, now=now)
        transaction.on_commit(replicas.visibility_changed)
    return entry


def entries_text_blank(entries) -> int:
    """What a deletion removes from these entries, in one UPDATE: the text (a question
    keeps an empty title, a reply none) and the actor. The one rule for `entry_delete`,
    `entries_delete` and the deletion purge (once a hold is released); returns the count."""
    return entries.update(
        title=Case(When(type=Entry.Type.QUESTION, then=Value("")), default=None),
        body="", actor_name="", actor_model="", actor_trigger="",
    )


def entries_delete(*, entry_ids: list[int], now: datetime | None = None) -> dict[str, int]:
    """`entry_delete` for many entries in one transaction (an erasure's batch): the same
    rule (text and actor removed, receipts marked deleted, deliveries cancelled) in a
    statement each instead of a statement each per entry. Entries already deleted are
    left alone and not counted. Returns the counts by type: questions and replies."""
    now = now or timezone.now()
    with transaction.atomic():
        live = Entry.objects.filter(pk__in=entry_ids, deleted_at__isnull=True)
        live = engines.for_connection().live_entries_locked(live)
        rows = list(live.values_list("id", "type"))
        ids = [entry_id for entry_id, _ in rows]
        if not ids:
            return {"questions": 0, "replies": 0}
        # Held entries keep their text and actor until no hold covers them (SPEC 8.2),
        # exactly as in entry_delete.
        held = holds.entries_held(ids)
        entries_text_blank(Entry.objects.filter(pk__in=ids).exclude(pk__in=held))
        Entry.objects.filter(pk__in=ids).update(visible=False, deleted_at=now)
        receipts.receipt_mark_deleted(
            operation=POST_ENTRY,
            result_ids=ids,
            now=now,
        )
        signals.entries_deleted.send(sender=Entry, entry_ids=ids, now=now)
        transaction.on_commit(replicas.visibility_changed)
    questions = sum(1 for _, kind in rows if kind == Entry.Type.QUESTION)
    return {"questions": questions, "replies": len(rows) - questions}
