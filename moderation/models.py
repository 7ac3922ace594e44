from django.db import models


class AuditEvent(models.Model):
    """One operator action: who, when, what, on which ids, and why. Never an entry's text."""

    # No single-column indexes: the list's indexes below start with these columns.
    created_at = models.DateTimeField()
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=40)
    target_type = models.CharField(max_length=40, blank=True, default="")
    target_ids = models.JSONField(default=list)
    reason = models.TextField(blank=True, default="")
    details = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at", "-id"]
        # The console's log and its filters, each in the list's order, ties included.
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="audit_newest"),
            models.Index(fields=["actor", "-created_at", "-id"], name="audit_actor_newest"),
            models.Index(fields=["action", "-created_at", "-id"], name="audit_action_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action}"


class Erasure(models.Model):
    """The one record of progress of erasing a principal's entries (SPEC 8.4).

    `up_to_id` bounds the entries it covers (the newest entry id when it started), so its
    `total` is fixed; it is empty while being counted (a start past the console's bound
    leaves the exact count to the runner, before its first batch). Every batch adds to
    `done`, `questions` and `replies` in the transaction that deletes the entries, so
    after a crash the counts match what is deleted and the next run takes up the entries
    still live.
    """

    class State(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished"

    principal = models.ForeignKey(
        "board.Principal", on_delete=models.PROTECT, related_name="erasures"
    )
    actor = models.CharField(max_length=150)
    reason = models.TextField()
    since = models.DateTimeField(null=True, blank=True)
    revoke_tokens = models.BooleanField(default=False)
    # How many tokens the start revoked, for the start's audit event when the runner
    # writes it.
    tokens_revoked = models.PositiveIntegerField(default=0)
    up_to_id = models.BigIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    questions = models.PositiveIntegerField(default=0)
    replies = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # When a batch last committed: a running erasure quiet for long lost its worker.
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            # A second start for the same principal while one runs joins that one.
            models.UniqueConstraint(
                fields=["principal"],
                condition=models.Q(state="running"),
                name="erasure_one_running_per_principal",
            )
        ]

    def __str__(self) -> str:
        total = "?" if self.total is None else self.total
        return f"erasure of {self.principal_id}: {self.done}/{total} ({self.state})"


class LoginReservation(models.Model):
    """A login attempt whose password (or second-factor code) is being checked now
    (moderation/access/throttling.py). Taken before the check, under the username's and the
    address's lock, and counted as a failure until the check ends: so attempts that
    arrive at once cannot all pass a limit none of them has reached yet. It becomes a
    failure (axes' failure log) or goes away with the check's answer; one whose worker
    died before the answer stops counting after `RESERVATION_TTL`."""

    username = models.CharField(max_length=255, db_index=True)
    address = models.GenericIPAddressField(db_index=True)
    created_at = models.DateTimeField(db_index=True)
