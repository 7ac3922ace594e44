"""The idempotency engine's records.

A Receipt is the durable identity of one intended write, `(scope, operation, request_id)`.
Its unique constraint is the lock that decides who owns a request. It keeps a digest of
the request and a short tag of each field (receipts/fingerprint.py), never the text, and
the id of the effect it produced.

A Tombstone is what is left of a receipt after retention: a 16-byte digest of the
identity, why it went, and the day the tombstone itself may go.

An Attempt is one call that got past the request-shape checks, kept for a short while for
operators reading what happened. The call that made a receipt has no row: the receipt
records its route and time (`first_route`, `first_seen_at`), and the operators' trace
shows it from there (receipts/selectors.py), so a new post writes one row fewer.
"""

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from django.db import models
from django.db.models import F, Q
from django.db.models.lookups import Lookup

from receipts.fingerprint import (
    FIELD_TAG_SIZE,
    PER_FIELD_DIGEST_SIZE,
    REQUEST_DIGEST_SIZE,
    packed_is_per_field,
)


class Route(models.TextChoices):
    API = "api"
    MCP = "mcp"


class Differs(Lookup):
    """`lhs <> rhs`, written so: the partial index's predicate and the look-ups that
    must match it text for text (Django's negated `=` adds an `IS NOT NULL` a planner
    then cannot match to the index)."""

    lookup_name = "differs"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} <> {rhs}", (*lhs_params, *rhs_params)


class Receipt(models.Model):
    class State(models.TextChoices):
        SUCCEEDED = "succeeded"
        DELETED = "deleted"

    scope = models.CharField(max_length=64)
    operation = models.CharField(max_length=32)
    request_id = models.UUIDField()
    # The request's digests, packed (receipts/fingerprint.py `packed_digests`): a version
    # byte, the whole request's digest (which decides replay or conflict) and a 4-byte
    # tag a field (which names a conflict's fields); or, on receipts made before that
    # form, 16 bytes a field (`per_field_packed`), compared so until they expire.
    packed_digests = models.BinaryField(null=True)
    # The same as JSON, `{field: 32 hex digits}`, as receipts made before the packed form
    # keep them (null on the others): their retries are compared with this until they
    # expire.
    digests = models.JSONField(null=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.SUCCEEDED)
    # No foreign key: receipts know nothing of what the operation created.
    result_id = models.BigIntegerField(null=True)
    first_route = models.CharField(max_length=8, choices=Route.choices)
    attempts = models.PositiveIntegerField(default=1)
    first_seen_at = models.DateTimeField()
    # Null until a retry: a new receipt's last attempt is its first, so a new post writes
    # 8 bytes fewer; readers take `last_seen`.
    last_seen_at = models.DateTimeField(null=True)
    receipt_expires_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # request_id first: the constraint's index also serves the operators'
            # look-up of a request_id across scopes (receipts/selectors.py), which
            # otherwise took an index of its own, one more entry written a post.
            models.UniqueConstraint(
                fields=["request_id", "scope", "operation"], name="receipt_one_per_identity"
            ),
        ]
        indexes = [
            # A receipt's id is its result's id (the claim writes both from the effect's
            # sequence), so the primary key finds the receipt of a result, and a new
            # post writes no entry here: this index holds only the receipts made before,
            # whose ids differ (`of_results` asks both; docs/write-path.md).
            models.Index(
                fields=["result_id"],
                name="receipt_result_id_older",
                condition=Q(Differs(F("result_id"), F("id"))),
            ),
            # The thread purge walks due receipts by `(receipt_expires_at, id)`, ties and
            # all (maintenance/tombstones/purge.py receipts_due): with the expiry alone,
            # a batch among many receipts sharing one expiry sorted them all first.
            models.Index(fields=["receipt_expires_at", "id"], name="receipt_expiry_id"),
            # The deletion purge walks deleted receipts by `deleted_at` (the policy in
            # force at each purge decides, not the expiry the delete stored); only
            # deleted receipts have one, so the index stays small.
            models.Index(
                fields=["deleted_at", "id"],
                name="receipt_deleted",
                condition=models.Q(deleted_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.request_id} ({self.state})"

    @property
    def last_seen(self) -> datetime:
        """When the request was last sent: its first time until a retry."""
        return self.last_seen_at or self.first_seen_at

    @property
    def digests_shown(self) -> list[tuple[str, str]]:
        """The digests as an operator reads them: (what, hex digits). JSON digests by
        field name; packed ones keep no name, so their fields are numbered in their
        names' order: the request's digest and each field's tag, or on a receipt made
        before that form, each field's 16-byte digest."""
        if self.packed_digests is None:
            return sorted((self.digests or {}).items())
        packed = bytes(self.packed_digests)
        if packed_is_per_field(packed):
            return [
                (f"field {n + 1}", packed[start:start + PER_FIELD_DIGEST_SIZE].hex())
                for n, start in enumerate(range(0, len(packed), PER_FIELD_DIGEST_SIZE))
            ]
        tags = 1 + REQUEST_DIGEST_SIZE
        return [
            (f"request (form {packed[0]})", packed[1:tags].hex()),
            *(
                (f"field {n + 1} tag", packed[start:start + FIELD_TAG_SIZE].hex())
                for n, start in enumerate(range(tags, len(packed), FIELD_TAG_SIZE))
            ),
        ]


def of_results(result_ids: Iterable[int]) -> Q:
    """The receipts whose result is one of `result_ids`: a new receipt by its primary key
    (its id is its result's), one made before by the partial index
    `receipt_result_id_older`, whose predicate the second arm repeats so both planners
    use it. Every ORM look-up of a result's receipt goes through here or
    `of_results_apart`; the statements in .sql files write the same condition out."""
    new, older = of_results_apart(list(result_ids))
    return new | older


def of_results_apart(result_ids: Iterable[int] | models.QuerySet) -> tuple[Q, Q]:
    """`of_results`' two arms, which no receipt is in both of: the new receipts of these
    results, and those made before. For a query of ids (a subquery), ask each arm in a
    query of its own: under an OR, PostgreSQL cannot join a subquery and reads every
    receipt instead."""
    return (
        Q(id__in=result_ids, result_id=F("id")),
        Q(Differs(F("result_id"), F("id")), result_id__in=result_ids),
    )


class Tombstone(models.Model):
    class Reason(models.IntegerChoices):
        EXPIRED = 1, "expired"
        DELETED = 2, "deleted"

    key = models.UUIDField(primary_key=True)
    reason = models.SmallIntegerField(choices=Reason.choices)
    # A day, not an instant: the exact expiry rounded *up* to the next midnight UTC, so a
    # tombstone never goes early. A date takes 4 bytes where a timestamp takes 8 (with
    # alignment padding, 8 bytes a row), which keeps a tombstone under 100 bytes on disk
    # with its index. Compared with `now` it means "until the start of that day".
    expires_at = models.DateField()

    class Meta:
        # The tombstone purge takes `expires_at <= today ORDER BY expires_at` a batch at
        # a time (it deletes, so it never pages); without it each batch scanned them all.
        indexes = [models.Index(fields=["expires_at"], name="tombstone_expiry")]

    def __str__(self) -> str:
        return f"{self.key} ({self.get_reason_display()})"


def tombstone_expiry_day(moment: datetime) -> date:
    """The day a tombstone expires: `moment` rounded up to a midnight (UTC). PostgreSQL's
    purge computes it in SQL too (maintenance/tombstones/sql/postgresql/entomb.sql);
    tests/receipts/test_tombstone_rules.py compares the two."""
    moment = moment.astimezone(UTC)
    day = moment.date()
    return day if moment == datetime.combine(day, time(), UTC) else day + timedelta(days=1)


def tombstone_today(now: datetime) -> date:
    """The day a tombstone is compared with at `now` (UTC): it is in force while its
    expiry day is later than this one (`expires_at > today`), and the purge takes it from
    this day on (`expires_at <= today`)."""
    return now.astimezone(UTC).date()


class Attempt(models.Model):
    class Outcome(models.TextChoices):
        CREATED = "created"
        REPLAYED = "replayed"
        CONFLICT = "conflict"
        DELETED = "deleted"
        EXPIRED = "expired"
        IN_PROGRESS = "in_progress"
        RATE_LIMITED = "rate_limited"
        REFUSED = "refused"
        UNAVAILABLE = "unavailable"

    identity = models.UUIDField()
    receipt_id = models.BigIntegerField(null=True, blank=True)
    route = models.CharField(max_length=8, choices=Route.choices)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    # The refusal's code (writes_disabled, parent_unavailable, ...) when outcome is refused.
    detail = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["identity", "created_at"], name="attempt_identity"),
            models.Index(fields=["created_at"], name="attempt_created"),
        ]
