"""What the console's deliveries and operations pages, the dashboard and the
`deliveries` command read (SPEC 9). Nothing here writes. Endpoint URLs are whole here:
show them through `endpoints.endpoint_display_url`, which cuts them to scheme and host for
anyone but an administrator."""

import contextlib
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint

# How far back an endpoint's success rate looks.
SUCCESS_RATE_WINDOW = timedelta(days=1)


def deliveries_unknown() -> QuerySet[Delivery]:
    """The unknown-outcome inbox: oldest first, with the endpoint, and its attempts
    (oldest first) prefetched as `delivery.attempt_log.all()`."""
    return (
        Delivery.objects.filter(state=Delivery.State.OUTCOME_UNKNOWN)
        .select_related("endpoint")
        .prefetch_related(
            Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("started_at"))
        )
        .order_by("created_at", "id")
    )


def deliveries_unknown_count(*, since: datetime | None = None, limit: int | None = None) -> int:
    """Unknown outcomes waiting for an operator (created since `since`, when given),
    counted up to `limit` when given: past it, the count says only "at least `limit`"."""
    rows = Delivery.objects.filter(state=Delivery.State.OUTCOME_UNKNOWN)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if limit is not None:
        return rows.values("id")[:limit].count()
    return rows.count()


def deliveries_filtered(
    *, state: str | None = None, endpoint: "Endpoint | str | None" = None
) -> QuerySet[Delivery]:
    """Deliveries newest first, by state and endpoint (an Endpoint or its name)."""
    rows = Delivery.objects.select_related("endpoint").order_by("-created_at", "-id")
    if state:
        rows = rows.filter(state=state)
    if isinstance(endpoint, Endpoint):
        rows = rows.filter(endpoint=endpoint)
    elif endpoint:
        rows = rows.filter(endpoint__name=endpoint)
    return rows


def delivery_get(delivery_id) -> Delivery | None:
    try:
        key = uuid.UUID(str(delivery_id).strip())
    except ValueError:
        return None
    return Delivery.objects.select_related("endpoint").filter(pk=key).first()


def delivery_attempts(delivery: Delivery) -> QuerySet[DeliveryAttempt]:
    """A delivery's evidence, oldest first."""
    return DeliveryAttempt.objects.filter(delivery=delivery).order_by("started_at")


@dataclass(frozen=True)
class EndpointOverview:
    endpoint: Endpoint
    # Sends (and resends) in the last SUCCESS_RATE_WINDOW, and the share answered 2xx;
    # None when there were none.
    recent_attempts: int
    recent_successes: int
    success_rate: float | None
    disabled_reason: str
    disabled_at: datetime | None


def endpoints_overview(*, now: datetime | None = None) -> list[EndpointOverview]:
    since = (now or timezone.now()) - SUCCESS_RATE_WINDOW
    # One query over the window's attempts (attempt_started), each one's endpoint read
    # from its delivery by primary key: its cost is the window's traffic, never the
    # table's age. A scalar subquery, not a join: joined, PostgreSQL hashes every delivery
    # ever made (a scan of the whole table) to match a day's attempts.
    answered_2xx = Q(status_code__gte=200, status_code__lt=300)
    endpoint_of = Subquery(
        Delivery.objects.filter(pk=OuterRef("delivery_id")).values("endpoint_id")[:1]
    )
    # Its estimate (a probe per attempt) passes PostgreSQL's jit_above_cost once a day
    # has a few thousand attempts, and compiling then cost more than the count.
    # (On SQLite no transaction: there every one is BEGIN IMMEDIATE, a write lock.)
    postgresql = hasattr(connection, "plan_without_jit")
    with transaction.atomic() if postgresql else contextlib.nullcontext():
        if postgresql:
            connection.plan_without_jit()
        counted = list(
            DeliveryAttempt.objects.filter(
                kind__in=[DeliveryAttempt.Kind.SEND, DeliveryAttempt.Kind.RESEND],
                started_at__gte=since,
            )
            .annotate(endpoint=endpoint_of)
            .values("endpoint")
            .annotate(n=Count("attempt_id"), ok=Count("attempt_id", filter=answered_2xx))
            .values_list("endpoint", "n", "ok")
        )
    totals = {endpoint: n for endpoint, n, _ in counted}
    successes = {endpoint: ok for endpoint, _, ok in counted}
    overview = []
    for endpoint in Endpoint.objects.order_by("name"):
        total, ok = totals.get(endpoint.pk, 0), successes.get(endpoint.pk, 0)
        overview.append(
            EndpointOverview(
                endpoint=endpoint,
                recent_attempts=total,
                recent_successes=ok,
                success_rate=(ok / total) if total else None,
                disabled_reason=endpoint.disabled_reason,
                disabled_at=endpoint.disabled_at,
            )
        )
    return overview


def deliveries_count_by_state() -> dict[str, int]:
    """Every state, zero included (for the dashboard and a metric)."""
    counts = dict.fromkeys(Delivery.State.values, 0)
    counts.update(
        Delivery.objects.values("state").annotate(n=Count("id")).values_list("state", "n")
    )
    return counts


def endpoints_disabled_count() -> int:
    return Endpoint.objects.filter(enabled=False).count()
