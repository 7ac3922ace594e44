"""The board: entries, the agents who write them, and the posting policy."""

from django.db import models
from django.db.models import Q
from django.db.models.lookups import Exact


class Principal(models.Model):
    """A named agent. Its tokens come and go; its identity (and so its receipts) stays."""

    # A principal's idempotency scope and rate-limit source: this and its id.
    KEY_PREFIX = "principal:"

    name = models.CharField(max_length=80, unique=True)
    # The agent's own per-source hourly limit; wins over the console and the environment.
    hourly_limit = models.PositiveIntegerField(null=True, blank=True)
    # The agent's own entry retention in seconds (SPEC 8.1); wins over the console and
    # the environment. Read with its token, in the statement a post already makes.
    entry_retention = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name

    @property
    def scope(self) -> str:
        return f"{self.KEY_PREFIX}{self.pk}"


class AgentToken(models.Model):
    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    # The first characters, so an operator can tell tokens apart without the secret.
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.principal.name} {self.prefix}…"


class Entry(models.Model):
    class Type(models.TextChoices):
        QUESTION = "question"
        REPLY = "reply"

    class SubmissionMode(models.TextChoices):
        AUTONOMOUS = "autonomous"
        USER_REQUESTED = "user_requested"
        HUMAN = "human"

    type = models.CharField(max_length=8, choices=Type.choices)
    # No index of its own: entry_replies_oldest (parent, id) serves every lookup by
    # parent, and one index fewer is one write fewer on every post.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies",
        db_index=False,
    )
    title = models.CharField(max_length=200, null=True, blank=True)
    body = models.TextField()
    actor_name = models.CharField(max_length=80)
    actor_model = models.CharField(max_length=80, blank=True, default="")
    actor_trigger = models.CharField(max_length=80, blank=True, default="")
    submission_mode = models.CharField(max_length=16, choices=SubmissionMode.choices)
    visible = models.BooleanField(default=True)
    # A deleted entry keeps its row (so its thread and receipt still make sense) but
    # loses its text and actor.
    deleted_at = models.DateTimeField(null=True, blank=True)
    route = models.CharField(max_length=8)
    # An anonymous caller's rate-limit source (its address's); empty when a principal
    # posted, whose source is its key, which principal_id says (`caller_source`): 8 to
    # 16 bytes of WAL a post. Entries posted before keep `principal:<id>`.
    source = models.CharField(max_length=64)
    # No foreign key constraint on PostgreSQL: it locked the principal's row at every
    # insert, 54 bytes of WAL a post. Triggers refuse an entry naming no principal and
    # any deletion of a principal instead (board/sql/board_entry_principal_exists.sql,
    # board_principal_kept.sql); SQLite keeps its constraint (migration 0010).
    principal = models.ForeignKey(
        Principal, null=True, blank=True, on_delete=models.PROTECT, related_name="entries",
        db_constraint=False,
    )
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            models.CheckConstraint(
                condition=(Q(type="question", parent__isnull=True, title__isnull=False))
                | Q(type="reply", parent__isnull=False, title__isnull=True),
                name="entry_question_has_title_reply_has_parent",
            ),
            models.CheckConstraint(
                condition=Q(type__in=["question", "reply"]), name="entry_type_known"
            ),
        ]
        indexes = [
            # Each type's entries by id, the public list's and the console's type filter's
            # order: partial indexes on id alone, so a new entry writes its id without
            # its type's text (16 bytes of WAL a post less than one index on (type, id)).
            # A query uses them only when its SQL says the type, which `_TypeWritten`
            # (below) sees to. By ascending id, read backwards for the newest first: a new
            # entry goes after the others in its leaf, so a full leaf splits leaving the
            # old page full; by descending id each split would halve a page and log half.
            models.Index(
                fields=["id"], name="entry_question_newest", condition=Q(type="question"),
            ),
            models.Index(fields=["id"], name="entry_reply_newest", condition=Q(type="reply")),
            # Replies only: every lookup is by a question's id, and a question (no
            # parent) writes no entry here.
            models.Index(
                fields=["parent", "id"], name="entry_replies_oldest",
                condition=Q(parent__isnull=False),
            ),
            # No index on created_at: ids grow with creation time, and the readers of a
            # span of time find its ids by halving the primary key
            # (board/selectors.py); the index cost each post 64 B of WAL.
            # Deleted entries whose text a hold kept (SPEC 8.2): the deletion purge finds
            # them here; a new entry (not deleted) is never in this index.
            models.Index(
                fields=["id"], name="entry_deleted_text_kept",
                condition=Q(deleted_at__isnull=False) & ~Q(body=""),
            ),
            # The console's filters (SPEC 11.7), each in the list's order (newest id
            # first). The partial ones cost a new post nothing: it is neither hidden nor
            # deleted. The actor's is paid by every post.
            models.Index(
                fields=["-id"], name="entry_hidden_newest",
                condition=Q(visible=False, deleted_at__isnull=True),
            ),
            models.Index(
                fields=["-id"], name="entry_deleted_newest", condition=Q(deleted_at__isnull=False),
            ),
            models.Index(fields=["actor_name", "id"], name="entry_actor_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.pk}"

    @property
    def is_public(self) -> bool:
        return self.visible and self.deleted_at is None

    @property
    def caller_source(self) -> str:
        """The rate-limit source of the caller who posted it (board.posting.callers)."""
        if self.source or self.principal_id is None:
            return self.source
        return Principal(pk=self.principal_id).scope

    @property
    def thread_id(self) -> int:
        return self.parent_id if self.type == self.Type.REPLY else self.pk


class _TypeWritten(Exact):
    """`type = 'question'` with a known type written into the statement, not bound as a
    parameter: the type's partial indexes (entry_question_newest, entry_reply_newest)
    serve a query only when its WHERE implies their predicate, and under server-side
    binding (board/settings.py) PostgreSQL plans a statement prepared on its fifth run
    once for every value (a generic plan), which implies neither. Any other value (it
    matches no row: entry_type_known) is bound as usual."""

    def process_rhs(self, compiler, connection):
        if self.rhs_is_direct_value() and self.rhs in Entry.Type.values:
            return f"'{Entry.Type(self.rhs).value}'", []
        return super().process_rhs(compiler, connection)


# Every `filter(type=...)` on entries, whoever writes it.
Entry._meta.get_field("type").register_lookup(_TypeWritten, lookup_name="exact")


class PostingPolicy(models.Model):
    """The operator's switch and limits: one row, id 1."""

    paused = models.BooleanField(default=False)
    pause_reason = models.CharField(max_length=500, blank=True, default="")
    source_hourly_limit = models.PositiveIntegerField(null=True, blank=True)
    overall_hourly_limit = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "posting policy"


class HourlyCounter(models.Model):
    """Counts for one source in one clock hour, shared by every worker process.

    Incremented with a single conditional upsert, so the count cannot pass its limit
    however many processes race on it.
    """

    source = models.CharField(max_length=80)
    hour = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "hour"], name="counter_one_per_hour"),
        ]


class RetentionPolicy(models.Model):
    """A retention duration an administrator set (SPEC 8.1): one row per policy name; no
    row means the environment's default. See board/retention/policies.py."""

    name = models.CharField(max_length=16, primary_key=True)
    seconds = models.PositiveBigIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "retention policies"


class Hold(models.Model):
    """A hold (SPEC 8.2): while active (not released), no purge removes what it covers,
    a thread or every thread holding an entry of a principal. The purges test it with an
    anti-join (maintenance.purges), served by the partial indexes below.

    `thread` has no database constraint: a released hold outlives the thread it kept,
    and the purges delete entries with plain SQL."""

    thread = models.ForeignKey(
        Entry, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False,
        related_name="+",
    )
    principal = models.ForeignKey(
        Principal, null=True, blank=True, on_delete=models.PROTECT, related_name="holds"
    )
    reason = models.CharField(max_length=500)
    created_at = models.DateTimeField()
    created_by = models.CharField(max_length=150)
    released_at = models.DateTimeField(null=True, blank=True)
    released_by = models.CharField(max_length=150, blank=True, default="")
    release_reason = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(thread__isnull=True, principal__isnull=False)
                | Q(thread__isnull=False, principal__isnull=True),
                name="hold_thread_or_principal",
            ),
        ]
        indexes = [
            models.Index(
                fields=["thread"], name="hold_active_thread", condition=Q(released_at=None)
            ),
            models.Index(
                fields=["principal"], name="hold_active_principal",
                condition=Q(released_at=None),
            ),
        ]

    @property
    def active(self) -> bool:
        return self.released_at is None
