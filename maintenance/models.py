"""What the maintenance jobs did, and the lock that keeps two SQLite runs apart."""

from django.db import models


class MaintenanceRun(models.Model):
    """One run of one job: when, how long, what it removed, and how it failed if it did.

    `error` holds the exception's class and SQLSTATE, never its text (SPEC 11.4).
    """

    job = models.CharField(max_length=64)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    counts = models.JSONField(default=dict)
    # False when the run stopped at its time budget with work left for the next run.
    complete = models.BooleanField(default=True)
    error = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["job", "-started_at"], name="run_job_latest")]

    def __str__(self) -> str:
        return f"{self.job} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class RunLock(models.Model):
    """A lease on one job, taken by a run on SQLite (PostgreSQL uses SKIP LOCKED instead).

    A lease rather than a flag, so a run that died holding it blocks nobody for long.
    """

    job = models.CharField(max_length=64, primary_key=True)
    holder = models.UUIDField()
    expires_at = models.DateTimeField()


# --- Outbound deliveries (SPEC 9; the mechanism is described in maintenance/outbox.py) ---


class Endpoint(models.Model):
    """A webhook receiver an administrator registered. Never deleted: its deliveries
    and their evidence refer to it."""

    class Supports(models.TextChoices):
        DEDUPE = "dedupe"
        LOOKUP = "lookup"
        NONE = "none"

    name = models.CharField(max_length=80, unique=True)
    url = models.CharField(max_length=2000)
    secret = models.CharField(max_length=80)
    # The secret before the last rotation keeps signing beside the new one until then.
    previous_secret = models.CharField(max_length=80, blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    supports = models.CharField(max_length=8, choices=Supports.choices, default=Supports.NONE)
    lookup_url = models.CharField(max_length=2000, blank=True, default="")
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=200, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    allow_private = models.BooleanField(default=False)
    private_reason = models.CharField(max_length=500, blank=True, default="")
    # For the automatic disabling: the last success, and the first failure after it.
    last_success_at = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.name


class Delivery(models.Model):
    """One announcement of one entry to one endpoint. Its id is the `webhook-id` and the
    `Idempotency-Key` of every attempt."""

    class State(models.TextChoices):
        ACCEPTED = "accepted"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCEL_REQUESTED = "cancel_requested"
        CANCELLED = "cancelled"
        OUTCOME_UNKNOWN = "outcome_unknown"

    FINAL = (State.SUCCEEDED, State.FAILED, State.CANCELLED)

    id = models.UUIDField(primary_key=True)
    # No index of its own: delivery_endpoint_newest starts with it. Each index is one more
    # B-tree insert per delivery inside the entry's transaction.
    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.PROTECT, related_name="deliveries", db_index=False
    )
    # A plain value, not a foreign key: purging or deleting the entry keeps its deliveries.
    entry_id = models.BigIntegerField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACCEPTED)
    # Attempts of the schedule made so far (lookups and one-off operator attempts excluded).
    attempts = models.PositiveIntegerField(default=0)
    # The attempt in flight or the last one; every state change compares it.
    current_attempt = models.UUIDField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    deadline_at = models.DateTimeField()
    # An earlier attempt's request left and no answer came: it may have landed.
    unanswered = models.BooleanField(default=False)
    # A lookup endpoint's delivery whose next step is a lookup, not a send.
    lookup_due = models.BooleanField(default=False)
    # Why it settled where a status code does not say (a mark's reason, a cancel, a 410).
    note = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="delivery_state_due"),
            models.Index(fields=["entry_id"], name="delivery_entry"),
            models.Index(fields=["endpoint", "-created_at"], name="delivery_endpoint_newest"),
            # Partial: a new delivery is unsettled, so the post that writes it skips this
            # index; the retention purge (settled_at < cutoff) is all that reads it.
            models.Index(
                fields=["state", "settled_at"], name="delivery_state_settled",
                condition=models.Q(settled_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.state})"


class DeliveryAttempt(models.Model):
    """Evidence of one request Settle made (or meant to make) for a delivery. Never the
    response body; the attempt id is ours and is never sent as the key."""

    class Kind(models.TextChoices):
        SEND = "send"
        LOOKUP = "lookup"
        RESEND = "resend"
        RECONCILE = "reconcile"

    attempt_id = models.UUIDField(primary_key=True)
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # The error's class (`timeout`, `connection_reset`, `address_refused`, ...), never text.
    error = models.CharField(max_length=40, blank=True, default="")
    # Whether the request (or part of it) left the process; None while in flight.
    request_left = models.BooleanField(null=True)

    class Meta:
        indexes = [models.Index(fields=["delivery", "started_at"], name="attempt_delivery_time")]

    def __str__(self) -> str:
        return f"{self.kind} {self.attempt_id}"
