"""The board's rules, one function each, called by the API, MCP, console and commands.

`entry_post` is SPEC 5.1 in code: the checks run in the contract's order, and each
refusal is a BoardError or ReceiptError that the routes translate with `error_answer`.
"""

import functools
import hashlib
import logging
import secrets
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Case, Value, When
from django.utils import timezone

from board import holds, retention, signals, statements
from board.callers import ANONYMOUS_SCOPE, Caller, address_source
from board.exceptions import (
    BoardError,
    ParentUnavailable,
    PostingPaused,
    RateLimited,
    Unauthorized,
)
from board.models import AgentToken, Entry, PostingPolicy, Principal
from board.schemas import (
    EntryRequest,
    check_json_depth,
    parse_entry_request,
    parse_json_object,
)
from receipts import services as receipts
from receipts.exceptions import OutcomeUnavailable
from receipts.fingerprint import field_digests
from receipts.models import Attempt, Receipt
from receipts.writer_turn import writer_turn

log = logging.getLogger(__name__)

POST_ENTRY = "post_entry:v1"
OVERALL_SOURCE = "*overall*"
TOKEN_PREFIX = "settle_"


# --- Principals and tokens --------------------------------------------------------------


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_issue(
    *, name: str, hourly_limit: int | None = None, entry_retention: int | None = None
) -> tuple[Principal, str]:
    """Add a token for NAME (made if new). The token is returned once and stored hashed.
    `entry_retention` (seconds, checked by the caller against board.retention.BOUNDS)
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
            principal=principal, token_hash=_token_hash(token), prefix=token[:12]
        )
    return principal, token


def token_revoke(*, name: str, now: datetime | None = None) -> int:
    """Revoke every live token of NAME; returns how many were revoked."""
    return AgentToken.objects.filter(principal__name=name, revoked_at__isnull=True).update(
        revoked_at=now or timezone.now()
    )


def caller_authenticate(*, token: str | None, address: str) -> Caller:
    """The caller behind a bearer token (or none); unknown and revoked tokens are refused.
    Reads never write: a token's last use is recorded only by a write that succeeded.
    A call without a token needs no database (POST /request-ids answers with none)."""
    if token is None:
        return _caller_of(None, None, address)
    return caller_admit(token=token, address=address).caller


@dataclass(frozen=True)
class Admission:
    """Who is calling and the posting policy as the call arrived: one read (a post needs
    both; the MCP transport reads both once for every tool)."""

    caller: Caller
    policy: PostingPolicy


def caller_admit(*, token: str | None, address: str) -> Admission:
    """The caller and the posting policy, in one statement; an unknown or revoked token
    raises Unauthorized, which carries the policy so a post can still count the refusal."""
    policy, caller = _admission_read(token, address)
    if caller is None:
        raise Unauthorized()
    return Admission(caller=caller, policy=policy)


def _admission_read(token: str | None, address: str) -> tuple[PostingPolicy, Caller | None]:
    """The policy, and the caller (None for an unknown or revoked token)."""
    policy, found = statements.posting_read(None if token is None else _token_hash(token))
    return policy, _caller_of(found, token, address)


def _caller_of(found: statements.TokenRow | None, token: str | None, address: str) -> Caller | None:
    """The caller a read token row stands for; None for a token that was not found."""
    source = address_source(address)
    if found is None:
        return None if token is not None else Caller(principal=None, address_source=source)
    return Caller(
        principal=found.principal,
        address_source=source,
        token_id=found.id,
        token_used_at=found.last_used_at,
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


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer ...` header; anything else is no token."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return authorization  # present but unusable: refused as an unknown token
    return token.strip()


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


def source_hourly_limit(caller: Caller | None, policy: PostingPolicy) -> int:
    if caller and caller.principal and caller.principal.hourly_limit is not None:
        return caller.principal.hourly_limit
    if policy.source_hourly_limit is not None:
        return policy.source_hourly_limit
    return settings.SETTLE_SOURCE_HOURLY_LIMIT


def overall_hourly_limit(policy: PostingPolicy) -> int:
    if policy.overall_hourly_limit is not None:
        return policy.overall_hourly_limit
    return settings.SETTLE_OVERALL_HOURLY_LIMIT


def counter_take(*, source: str, limit: int, now: datetime) -> bool:
    """Count one more for `source` this clock hour; False when that would pass `limit`.

    One conditional upsert, so concurrent callers in any process can never push the
    count past the limit, and a refused call is not counted.
    """
    return statements.counter_take(source=source, limit=limit, hour=_hour(now))


def _hour(now: datetime) -> datetime:
    return now.replace(minute=0, second=0, microsecond=0)


def seconds_to_next_hour(now: datetime) -> int:
    next_hour = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return max(1, int((next_hour - now).total_seconds() + 0.999))


# --- Posting an entry (SPEC 5.1) --------------------------------------------------------


@dataclass(frozen=True)
class PostedEntry:
    entry: Entry
    receipt: Receipt
    replayed: bool


def entry_post_received(
    *,
    token: str | None,
    address: str,
    body: bytes | dict | None,
    header_key: str | None = None,
    route: str,
    now: datetime | None = None,
    admission: Admission | None = None,
) -> PostedEntry:
    """A post as it comes off the wire (HTTP body bytes, MCP arguments): step 1, then
    steps 2 to 7. `admission` is the caller and policy a transport already read. Without
    it, PostgreSQL reads the token in the same statement as the counters
    (`_count_presented`); SQLite reads it first, outside the post's writer turn."""
    now = now or timezone.now()
    if admission is None and connection.vendor != "postgresql":
        admission = _admission_checked(token=token, address=address, now=now)
    try:
        if admission is not None:
            _caller_check(admission.caller)
        data = check_json_depth(body) if isinstance(body, dict) else parse_json_object(body)
        request = parse_entry_request(data, header_key=header_key)
    except BoardError:
        # Step 1 judges the token before the shape: a bad token is `401` whatever the body.
        if admission is None:
            admission = _admission_checked(token=token, address=address, now=now)
        _refusal_count(address=address, policy=admission.policy, now=now)
        raise
    if admission is not None:
        return entry_post(
            caller=admission.caller, request=request, route=route, now=now,
            policy=admission.policy,
        )
    with writer_turn():
        return _entry_post(
            count=functools.partial(
                _count_presented, token=token, address=address, request=request, now=now
            ),
            request=request, route=route, now=now,
        )


@contextmanager
def _nothing_saved_yet() -> Iterator[None]:
    """Around what runs before the claim: a database error there means nothing of the
    write began, so nothing was saved (`not_committed`)."""
    try:
        yield
    except DatabaseError as error:
        log.warning("post refused before its claim: %s", type(error).__name__)
        raise OutcomeUnavailable(outcome=OutcomeUnavailable.NOT_COMMITTED) from None


def _caller_check(caller: Caller | None) -> Caller:
    """Step 1's token check: an unknown or revoked token, or none where anonymous posting
    is off, is refused."""
    if caller is None:
        raise Unauthorized()
    if caller.principal is None and not settings.SETTLE_ALLOW_ANONYMOUS:
        raise Unauthorized("posting needs a bearer token on this server")
    return caller


def _admission_checked(*, token: str | None, address: str, now: datetime) -> Admission:
    """The caller and policy, read on their own; a caller step 1 refuses is counted
    against its address, then refused."""
    with _nothing_saved_yet():
        policy, caller = _admission_read(token, address)
    try:
        return Admission(caller=_caller_check(caller), policy=policy)
    except Unauthorized:
        _refusal_count(address=address, policy=policy, now=now)
        raise


def _refusal_count(*, address: str, policy: PostingPolicy, now: datetime) -> None:
    """Step 1's refusals write nothing but their count, against the client's address."""
    with _nothing_saved_yet():
        counter_take(
            source=address_source(address), limit=source_hourly_limit(None, policy), now=now
        )


def entry_post(
    *,
    caller: Caller,
    request: EntryRequest,
    route: str,
    now: datetime,
    policy: PostingPolicy | None = None,
) -> PostedEntry:
    """SPEC 5.1 steps 2 to 7 for a parsed request of a known caller.

    `policy` is the posting policy as the call arrived (read with the token by the
    wire adapters); read here when not given.

    Statements on PostgreSQL for a new question over HTTP
    (tests/board/test_statement_budget.py): the counters (one autocommit statement that
    also reads the token and the policy, and looks for a committed receipt), BEGIN, the
    claim (which reserves the entry's id), the entry with its attempt log and the outbox's
    rows, COMMIT: five. A replay: the counters, then one autocommit statement that locks
    and counts the receipt, logs the attempt and reads the entry. A new post makes
    exactly one durable commit; a replay and the counters make none that waits for the
    WAL flush (receipts.statements.no_flush_wait). A caller already known (MCP reads it
    for every tool) adds its read. On SQLite the post's writes take their turn first
    (receipts/writer_turn.py).
    """
    with writer_turn():
        return _entry_post(
            count=functools.partial(
                _count_known, caller=caller, policy=policy, request=request, now=now
            ),
            request=request, route=route, now=now,
        )


@dataclass(frozen=True)
class _Counted:
    """Step 2 done: who posts, the policy as the call arrived, and what was counted."""

    caller: Caller
    policy: PostingPolicy
    taken: statements.Taken


def _count_known(
    *, caller: Caller, policy: PostingPolicy | None, request: EntryRequest, now: datetime
) -> _Counted:
    """Step 2, and step 5 provisionally (see board/statements.py): one statement."""
    policy = policy or posting_policy_current()
    taken = statements.counters_take(
        source=caller.source,
        source_limit=source_hourly_limit(caller, policy),
        overall=OVERALL_SOURCE,
        overall_limit=overall_hourly_limit(policy),
        hour=_hour(now),
        seen_sql=receipts.receipt_seen_sql(
            operation=POST_ENTRY, request_id=request.request_id, scope_params=[caller.scope]
        ),
    )
    return _Counted(caller=caller, policy=policy, taken=taken)


def _count_presented(
    *, token: str | None, address: str, request: EntryRequest, now: datetime
) -> _Counted:
    """Step 1's token check with step 2 (and 5, provisionally), on PostgreSQL: one
    statement reads the token and the policy as it counts; a caller step 1 refuses is
    counted against its address, then refused."""
    admitted = statements.posting_admit_count(
        token_hash=None if token is None else _token_hash(token),
        address_source=address_source(address),
        anonymous_allowed=settings.SETTLE_ALLOW_ANONYMOUS,
        anonymous_scope=ANONYMOUS_SCOPE,
        source_default_limit=settings.SETTLE_SOURCE_HOURLY_LIMIT,
        overall=OVERALL_SOURCE,
        overall_default_limit=settings.SETTLE_OVERALL_HOURLY_LIMIT,
        hour=_hour(now),
        operation=POST_ENTRY,
        request_id=request.request_id,
    )
    caller = _caller_check(_caller_of(admitted.token, token, address))
    return _Counted(caller=caller, policy=admitted.policy, taken=admitted.taken)


def _entry_post(
    *,
    count: Callable[[], _Counted],
    request: EntryRequest,
    route: str,
    now: datetime,
) -> PostedEntry:
    with _nothing_saved_yet():
        counted = count()
    caller, policy, taken = counted.caller, counted.policy, counted.taken
    identity = receipts.Identity(
        scope=caller.scope, operation=POST_ENTRY, request_id=request.request_id
    )
    hour = _hour(now)
    overall = _OverallTake(taken=bool(taken.overall), refused=taken.overall is False)
    if not taken.source:
        # Every attempt counts, retries included; what this limit refuses does not.
        overall.give_back(hour)
        receipts.attempt_record(
            identity=identity, route=route, outcome=Attempt.Outcome.RATE_LIMITED, now=now
        )
        raise RateLimited(limit="source", retry_after=seconds_to_next_hour(now))

    def before() -> None:
        """Steps 4 to 6, inside the claim's transaction."""
        # `policy` was read as the call arrived: a pause that lands while this
        # transaction runs did not exist when the agent asked, so it is judged without.
        if policy.paused:
            raise PostingPaused(reason=policy.pause_reason)
        if overall.refused:
            raise RateLimited(limit="overall", retry_after=seconds_to_next_hour(now))
        if not overall.taken:
            # The receipt was seen, then purged before this claim: rare; take it here.
            if not counter_take(
                source=OVERALL_SOURCE, limit=overall_hourly_limit(policy), now=now
            ):
                raise RateLimited(limit="overall", retry_after=seconds_to_next_hour(now))
        if request.type == Entry.Type.REPLY:
            _require_open_question(request.parent_id, now)

    def after(entry: Entry) -> None:
        signals.entry_created.send(sender=Entry, entry=entry, now=now)

    try:
        settled = receipts.receipt_execute(
            identity=identity,
            digests=field_digests(request.content()),
            route=route,
            now=now,
            retention=retention.entry_retention_for(caller.principal),
            effect=receipts.Effect(
                model=Entry,
                values=_entry_values(request, caller, route, now),
                companions=functools.partial(_entry_companions, now),
            ),
            before=before,
            after=after,
            seen=taken.seen,
        )
    except BaseException:
        overall.give_back(hour)
        raise
    if settled.replayed:
        overall.give_back(hour)
    _token_touch(caller, now)
    return PostedEntry(entry=settled.result, receipt=settled.receipt, replayed=settled.replayed)


def _entry_companions(now: datetime) -> list[receipts.Companion]:
    """What other apps write with a new entry (the outbox), asked for as it is made."""
    answers = signals.entry_companions.send(sender=Entry, now=now)
    return [companion for _, companion in answers if companion is not None]


@dataclass
class _OverallTake:
    """The provisional take of the overall counter, given back at most once when the
    post makes no entry (a replay, a refusal, a fault)."""

    taken: bool
    refused: bool

    def give_back(self, hour: datetime) -> None:
        if not self.taken:
            return
        self.taken = False
        try:
            statements.counter_give_back(source=OVERALL_SOURCE, hour=hour)
        except DatabaseError as error:
            # Lost: the hour's limit is one lower until the hour ends. Never an error.
            log.warning("overall counter give-back failed: %s", type(error).__name__)


def _entry_values(request: EntryRequest, caller: Caller, route: str, now: datetime) -> dict:
    return {
        "type": request.type,
        "parent_id": request.parent_id,
        "title": request.title,
        "body": request.body,
        "actor_name": request.actor_name,
        "actor_model": request.actor_model,
        "actor_trigger": request.actor_trigger,
        "submission_mode": request.submission_mode,
        "visible": True,
        "deleted_at": None,
        "route": route,
        "source": caller.source,
        "principal_id": caller.principal.pk if caller.principal else None,
        "created_at": now,
    }


def _require_open_question(parent_id: int, now: datetime) -> None:
    is_open = _question_public_locked(parent_id) and Receipt.objects.filter(
        operation=POST_ENTRY,
        result_id=parent_id,
        state=Receipt.State.SUCCEEDED,
        receipt_expires_at__gt=now,
    ).exists()
    if not is_open:
        raise ParentUnavailable()


def _question_public_locked(question_id: int) -> bool:
    """Whether the question is public, holding it against the retention purge until this
    write commits.

    The purge claims a thread by locking its question row (FOR UPDATE SKIP LOCKED). With
    FOR KEY SHARE here (replies do not block each other), a purge that comes second
    leaves the thread alone, and a purge that came first makes this wait and then find
    the question gone (422). Without it, a reply accepted just before the question's
    expiry could fail its foreign key at COMMIT, an `unknown` outcome. SQLite needs
    nothing: its write transactions already exclude each other.
    """
    if connection.vendor != "postgresql":
        return Entry.objects.filter(
            pk=question_id, type=Entry.Type.QUESTION, visible=True, deleted_at__isnull=True
        ).exists()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s AND type = %s "
            f"AND visible AND deleted_at IS NULL FOR KEY SHARE",
            [question_id, Entry.Type.QUESTION.value],
        )
        return cursor.fetchone() is not None


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
            entry.title = "" if entry.type == Entry.Type.QUESTION else None
            entry.body = ""
            entry.actor_name = entry.actor_model = entry.actor_trigger = ""
        entry.visible = False
        entry.deleted_at = now
        entry.save(
            update_fields=[
                "title", "body", "actor_name", "actor_model", "actor_trigger",
                "visible", "deleted_at",
            ]
        )
        receipts.receipt_mark_deleted(
            operation=POST_ENTRY,
            result_ids=[entry.pk],
            now=now,
            retention=retention.policy_in_force(retention.DELETION, fresh=True).duration,
        )
        signals.entry_deleted.send(sender=Entry, entry=entry, now=now)
    return entry


def entries_delete(*, entry_ids: list[int], now: datetime | None = None) -> dict[str, int]:
    """`entry_delete` for many entries in one transaction (an erasure's batch): the same
    rule (text and actor removed, receipts marked deleted, deliveries cancelled) in a
    statement each instead of a statement each per entry. Entries already deleted are
    left alone and not counted. Returns the counts by type: questions and replies."""
    now = now or timezone.now()
    with transaction.atomic():
        live = Entry.objects.filter(pk__in=entry_ids, deleted_at__isnull=True)
        if connection.vendor == "postgresql":
            live = live.select_for_update()
        rows = list(live.values_list("id", "type"))
        ids = [entry_id for entry_id, _ in rows]
        if not ids:
            return {"questions": 0, "replies": 0}
        # Held entries keep their text and actor until no hold covers them (SPEC 8.2),
        # exactly as in entry_delete.
        held = holds.entries_held(ids)
        Entry.objects.filter(pk__in=ids).exclude(pk__in=held).update(
            title=Case(When(type=Entry.Type.QUESTION, then=Value("")), default=None),
            body="", actor_name="", actor_model="", actor_trigger="",
        )
        Entry.objects.filter(pk__in=ids).update(visible=False, deleted_at=now)
        receipts.receipt_mark_deleted(
            operation=POST_ENTRY,
            result_ids=ids,
            now=now,
            retention=retention.policy_in_force(retention.DELETION, fresh=True).duration,
        )
        signals.entries_deleted.send(sender=Entry, entry_ids=ids, now=now)
    questions = sum(1 for _, kind in rows if kind == Entry.Type.QUESTION)
    return {"questions": questions, "replies": len(rows) - questions}
