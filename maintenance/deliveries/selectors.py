"""What the console's deliveries and operations pages, the dashboard and the
`deliveries` command read (SPEC 9). Nothing here writes. Endpoint URLs are whole here:
show them through `endpoints.endpoint_display_url`, which cuts them to scheme and host for
anyone but an administrator."""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Prefetch, QuerySet, Sum
from django.utils import timezone

from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint, EndpointMinute

# How far back an endpoint's success rate looks (and how long its rollup keeps minutes).
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
    # None when there were none. As of `rolled_up_at`, the last run of the job that
    # counts them (maintenance/deliveries/rates.py); None before its first.
    recent_attempts: int
    recent_successes: int
    success_rate: float | None
    disabled_reason: str
    disabled_at: datetime | None
    rolled_up_at: datetime | None = None


def endpoints_overview(*, now: datetime | None = None) -> list[EndpointOverview]:
    """Every endpoint, by name, with its success rate over the last day as the per-minute
    rollup holds it: at most a day of minutes an endpoint, whatever the traffic."""
    now = now or timezone.now()
    counted = {
        row["endpoint"]: row
        for row in EndpointMinute.objects.filter(
            minute__gt=now - SUCCESS_RATE_WINDOW, minute__lte=now
        )
        .values("endpoint")
        .annotate(sends=Sum("sends"), successes=Sum("successes"), rolled_up_at=Max("rolled_up_at"))
    }
    overview = []
    for endpoint in Endpoint.objects.order_by("name"):
        found = counted.get(endpoint.pk, {})
        total, ok = found.get("sends") or 0, found.get("successes") or 0
        overview.append(
            EndpointOverview(
                endpoint=endpoint,
                recent_attempts=total,
                recent_successes=ok,
                success_rate=(ok / total) if total else None,
                disabled_reason=endpoint.disabled_reason,
                disabled_at=endpoint.disabled_at,
                rolled_up_at=found.get("rolled_up_at"),
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
