"""Outbound deliveries' records (SPEC 9), and the state machine as `Delivery`'s transitions.

The models belong to the `maintenance` app (`app_label`), so their tables, migrations and
`maintenance.Delivery` references are the ones they always were; they live here, in the
deliveries' own room, and `maintenance/models.py` imports them for the app registry.

Every transition is one compare-and-set (`Delivery._moved`) on the state and the current
attempt this object was read with: a late worker result never overwrites an operator's
decision, and a redelivered task finds the state moved on and does nothing.
"""

from datetime import datetime

from django.db import models

from maintenance.deliveries import rules

# Field limits, named once: the fields below and the operator actions that cut or refuse
# text to fit them (maintenance.deliveries.endpoints, .actions) read these.
NAME_LIMIT = 80
URL_LIMIT = 2000
SECRET_LIMIT = 80
REASON_LIMIT = 200
NOTE_LIMIT = 500


class Endpoint(models.Model):
    """A webhook receiver an administrator registered. Never deleted: its deliveries
    and their evidence refer to it."""

    class Supports(models.TextChoices):
        DEDUPE = "dedupe"
        LOOKUP = "lookup"
        NONE = "none"

    name = models.CharField(max_length=NAME_LIMIT, unique=True)
    url = models.CharField(max_length=URL_LIMIT)
    secret = models.CharField(max_length=SECRET_LIMIT)
    # The secret before the last rotation keeps signing beside the new one until then.
    previous_secret = models.CharField(max_length=SECRET_LIMIT, blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    supports = models.CharField(max_length=8, choices=Supports.choices, default=Supports.NONE)
    lookup_url = models.CharField(max_length=URL_LIMIT, blank=True, default="")
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=REASON_LIMIT, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    allow_private = models.BooleanField(default=False)
    private_reason = models.CharField(max_length=NOTE_LIMIT, blank=True, default="")
    # For the automatic disabling: the last success, and the first failure after it.
    last_success_at = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        app_label = "maintenance"

    def __str__(self) -> str:
        return self.name


class DeliveryQuerySet(models.QuerySet):
    """The cancel and deadline rules on many rows at once, one statement per state: not
    compare-and-sets on one row read earlier, but picking their rows by state in the
    statement that changes them, so they never overwrite a state they did not see."""

    def cancel(self, *, now: datetime, note: str) -> int:
        """The cancel rule (see `Delivery.cancel`) on these rows' accepted and running ones."""
        settled = self.filter(state=Delivery.State.ACCEPTED).update(
            state=_unless_unanswered(Delivery.State.CANCELLED), note=note,
            settled_at=_settled_unless_unanswered(now), next_attempt_at=None,
        )
        asked = self.filter(state=Delivery.State.RUNNING).update(
            state=Delivery.State.CANCEL_REQUESTED, note=note
        )
        return settled + asked

    def expire(self, *, now: datetime) -> int:
        """Accepted ones past their deadline: `failed`, or `outcome_unknown` when an
        earlier attempt may have landed."""
        return self.filter(state=Delivery.State.ACCEPTED, deadline_at__lte=now).update(
            state=_unless_unanswered(Delivery.State.FAILED), next_attempt_at=None,
            lookup_due=False, settled_at=_settled_unless_unanswered(now),
            note="deadline passed",
        )


_MOMENT = models.DateTimeField()


def _unless_unanswered(state: str) -> models.Case:
    # An earlier attempt whose request left without an answer may have landed.
    return models.Case(
        models.When(unanswered=True, then=models.Value(Delivery.State.OUTCOME_UNKNOWN.value)),
        default=models.Value(str(state)),  # a TextChoices member's str is its value
    )


def _settled_unless_unanswered(now: datetime) -> models.Case:
    return models.Case(
        models.When(unanswered=True, then=models.Value(None, output_field=_MOMENT)),
        default=models.Value(now, output_field=_MOMENT),
        output_field=_MOMENT,
    )


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
    # No index of its own: delivery_endpoint_newest_id starts with it. Each index is one more
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
    note = models.CharField(max_length=NOTE_LIMIT, blank=True, default="")
    created_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        app_label = "maintenance"
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="delivery_state_due"),
            models.Index(fields=["entry_id"], name="delivery_entry"),
            # The console's list and its filters, in its order (newest first, ties by id):
            # every page a range scan. The inbox is the state filter's outcome_unknown,
            # and the dashboard counts its unknown outcomes per window by the same index.
            models.Index(fields=["-created_at", "-id"], name="delivery_newest"),
            models.Index(fields=["state", "-created_at", "-id"], name="delivery_state_newest"),
            models.Index(
                fields=["endpoint", "-created_at", "-id"], name="delivery_endpoint_newest_id"
            ),
            # Partial: a new delivery is unsettled, so the post that writes it skips this
            # index; the retention purge (a final state, settled_at < cutoff, oldest
            # first) is all that reads it, in its order: led by the state, each batch
            # sorted every settled row of the three final states.
            models.Index(
                fields=["settled_at"], name="delivery_final_settled",
                condition=models.Q(state__in=["succeeded", "failed", "cancelled"]),
            ),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.state})"

    # --- Transitions (SPEC 9's state table) -------------------------------------------
    # Each returns whether it won; on a win this object holds the new values.

    def claim(self, *, attempt_id, lease: models.Expression, count: bool) -> bool:
        """`accepted`/`outcome_unknown` → `running` for this attempt, before any request.
        `lease` is an expression on the database's clock, so it is not read back here."""
        return self._moved(
            state=self.State.RUNNING, current_attempt=attempt_id, lease_expires_at=lease,
            # Exact: `attempts` changes only with a claim, which changes the attempt the
            # compare-and-set checks.
            attempts=self.attempts + (1 if count else 0),
        )

    def cancel(self, *, now: datetime, note: str) -> bool:
        """The cancel rule on one delivery: `accepted` is cancelled, or `outcome_unknown`
        when an earlier attempt may have landed; `running` becomes `cancel_requested` and
        the attempt in flight settles it. False in any other state."""
        if self.state == self.State.ACCEPTED:
            unknown = self.unanswered
            return self._moved(
                state=self.State.OUTCOME_UNKNOWN if unknown else self.State.CANCELLED,
                note=note, next_attempt_at=None, settled_at=None if unknown else now,
            )
        if self.state == self.State.RUNNING:
            return self._moved(state=self.State.CANCEL_REQUESTED, note=note)
        return False

    def mark(self, *, state: str, reason: str, now: datetime) -> bool:
        """An operator's word on the outcome: `succeeded` or `failed`."""
        return self._moved(
            state=state, note=f"marked {state}: {reason}"[:NOTE_LIMIT], settled_at=now,
            next_attempt_at=None, lookup_due=False,
        )

    def attempt_ended(self, *, kind: str, answer: rules.Answered, now: datetime) -> bool:
        """Settle the attempt in flight (`running` or `cancel_requested`) by what it saw."""
        if kind in (DeliveryAttempt.Kind.LOOKUP, DeliveryAttempt.Kind.RECONCILE):
            return self._looked_up(kind, answer.status_code, now)
        return self._sent(kind, rules.answer_kind(answer), answer.retry_after, now)

    def _looked_up(self, kind: str, status_code: int | None, now: datetime) -> bool:
        S = self.State
        cancelling = self.state == S.CANCEL_REQUESTED
        reconciling = kind == DeliveryAttempt.Kind.RECONCILE
        if status_code == 200:
            return self._settled(S.SUCCEEDED, now)
        if status_code == 404:
            if reconciling:
                return self._settled(S.FAILED, now, note="lookup: never received")
            # Never received: the earlier send did not land, so nothing is ambiguous now.
            if cancelling:
                return self._settled(S.CANCELLED, now, unanswered=False)
            if self.attempts < len(rules.schedule()):
                return self._waiting(until=now, unanswered=False)
            return self._settled(S.FAILED, now, unanswered=False)
        if reconciling or cancelling:
            return self._settled(S.OUTCOME_UNKNOWN, now)
        again = now + rules.LOOKUP_AGAIN_AFTER
        if again >= self.deadline_at:
            return self._settled(S.OUTCOME_UNKNOWN, now)
        return self._waiting(until=again, lookup=True)

    def _sent(self, kind: str, result: str, retry_after: float | None, now: datetime) -> bool:
        S = self.State
        if result == "ok":
            return self._settled(S.SUCCEEDED, now)
        if result == "refused":
            return self._settled(S.FAILED, now)
        if kind == DeliveryAttempt.Kind.RESEND:
            return self._settled(S.OUTCOME_UNKNOWN, now)
        unanswered = self.unanswered or result == "lost"
        if self.state == S.CANCEL_REQUESTED:
            return self._settled(S.OUTCOME_UNKNOWN if unanswered else S.CANCELLED, now)
        supports = self.endpoint.supports
        if result == "lost" and supports == Endpoint.Supports.NONE:
            return self._settled(S.OUTCOME_UNKNOWN, now, unanswered=True)
        due = rules.next_due(self, now, retry_after)
        if result == "lost" and supports == Endpoint.Supports.LOOKUP:
            # Asked before anything is sent again: at the next attempt's time, or at once
            # when the schedule has no attempt left (a 404 then ends it `failed`).
            due = due or now + rules.LOOKUP_AGAIN_AFTER
            if due >= self.deadline_at:
                return self._settled(S.OUTCOME_UNKNOWN, now, unanswered=True)
            return self._waiting(until=due, lookup=True, unanswered=True)
        if due is None:
            return self._settled(
                S.OUTCOME_UNKNOWN if unanswered else S.FAILED, now, unanswered=unanswered
            )
        return self._waiting(until=due, unanswered=unanswered)

    def _settled(self, state: str, now: datetime, **also) -> bool:
        """An attempt's end in a final state or in `outcome_unknown` (which is not final:
        an operator settles it, so `settled_at` stays empty)."""
        if state in self.FINAL:
            also["settled_at"] = now
        return self._moved(
            state=state, next_attempt_at=None, lookup_due=False, lease_expires_at=None, **also
        )

    def _waiting(self, *, until: datetime, lookup: bool = False, **also) -> bool:
        """An attempt's end back in `accepted`, for the next send (or lookup) at `until`."""
        return self._moved(
            state=self.State.ACCEPTED, next_attempt_at=until, lookup_due=lookup,
            lease_expires_at=None, **also,
        )

    def _moved(self, **changes) -> bool:
        """The one compare-and-set every transition goes through: the row changes only if
        its state and current attempt are still the ones this object was read with."""
        won = Delivery.objects.filter(
            pk=self.pk, state=self.state, current_attempt=self.current_attempt
        ).update(**changes) == 1
        if won:
            for field, value in changes.items():
                if not hasattr(value, "resolve_expression"):
                    setattr(self, field, value)
        return won


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
        app_label = "maintenance"
        indexes = [
            models.Index(fields=["delivery", "started_at"], name="attempt_delivery_time"),
            # The deliveries page's success rates read the last SUCCESS_RATE_WINDOW of
            # attempts by this, a range as long as the window, however old the table.
            models.Index(fields=["started_at"], name="attempt_started"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.attempt_id}"



class EndpointMinute(models.Model):
    """One endpoint's sends and resends started in one UTC minute, and how many of them
    were answered 2xx: the deliveries page's success rates.

    Kept by a beat job (maintenance/deliveries/rates.py) so the page sums at most a day of
    these rows per endpoint, whatever the traffic, and an attempt writes nothing more.
    """

    # No index of its own: the unique (minute, endpoint) below leads with the minute,
    # which is how the job and the page read; endpoints are never deleted.
    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    minute = models.DateTimeField()
    sends = models.PositiveIntegerField(default=0)
    successes = models.PositiveIntegerField(default=0)
    rolled_up_at = models.DateTimeField()

    class Meta:
        app_label = "maintenance"
        constraints = [
            models.UniqueConstraint(fields=["minute", "endpoint"], name="endpoint_minute_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} at {self.minute:%Y-%m-%d %H:%M}: {self.successes}/{self.sends}"
