"""The endpoints' success rates on the deliveries page: sends and resends, and those
answered 2xx, counted per endpoint per UTC minute by a beat job.

Design note
-----------
Counting the last day's attempts on every view costs what the day's traffic costs (SPEC
11.7 wants every console page to cost the same however busy the board is). Counting as
attempts are written would add a write to a shared hot row to every attempt; so a beat
job counts instead, every minute (`deliveries-roll-up` in board/settings.py), in the
manner of the dashboard's rollup (maintenance/activity.py), and the page sums at most a
day of minutes per endpoint: 1,440 small rows an endpoint whatever the traffic. The price
is that the rates are up to a minute (plus the job's run) behind, which the page says.

Minutes rather than hours: a run recounts whole buckets, so with hours each minute's run
would recount up to an hour of attempts (sixty times the minute's traffic) and the day's
edge would move by up to an hour; with minutes a run recounts a few minutes of traffic
and the day is the day to the minute.

Each run recounts every minute from a little before its last run (`late_answers`) to
now, by the attempts' `started_at` index (attempt_started): an attempt is bucketed by its
start, and its answer is written when it ends, at most the timeout and the lease's margin
later, and committed a moment after that; so an attempt started before the last run whose
row or answer landed after it is counted by the next one. Every endpoint gets a row for
every minute of the span, zeros included, so a minute whose attempts went since (a purge)
is set back to zero and the last run is known even on a quiet day. A beat that stopped
for a day recounts at most `SUCCESS_RATE_WINDOW` on its return. Rows are written with an
upsert, so two runs at once both end with the right counts.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, OuterRef, Q, Subquery
from django.db.models.functions import TruncMinute

from maintenance.activity import LATE_COMMIT, minute_of
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint, EndpointMinute
from maintenance.deliveries.selectors import SUCCESS_RATE_WINDOW

# What the rates count: attempts that sent the notice, the schedule's and an operator's.
COUNTED_KINDS = [DeliveryAttempt.Kind.SEND, DeliveryAttempt.Kind.RESEND]
ANSWERED_2XX = Q(status_code__gte=200, status_code__lt=300)


@dataclass(frozen=True)
class RollUp:
    since: datetime
    minutes: int
    sends: int


def late_answers() -> timedelta:
    """How far before its last run a run recounts: an attempt's answer is written up to
    its timeout and the lease's margin after its start, then committed late like a post."""
    return settings.SETTLE_DELIVERY_TIMEOUT + settings.SETTLE_DELIVERY_LEASE_MARGIN + LATE_COMMIT


def endpoint_rates_roll_up(*, now: datetime) -> RollUp:
    """Count each endpoint's sends and 2xx answers per minute from shortly before the last
    run to `now` (the whole window on the first run), and drop minutes older than it."""
    oldest = minute_of(now - SUCCESS_RATE_WINDOW)
    last = EndpointMinute.objects.aggregate(last=Max("rolled_up_at"))["last"]
    since = oldest if last is None else max(oldest, minute_of(min(last, now) - late_answers()))
    # Each attempt's endpoint read from its delivery by primary key, a probe per attempt
    # of the span: joined instead, PostgreSQL may hash every delivery ever made to match.
    endpoint_of = Subquery(
        Delivery.objects.filter(pk=OuterRef("delivery_id")).values("endpoint_id")[:1]
    )
    counted = {
        (row["minute"], row["endpoint"]): row
        for row in DeliveryAttempt.objects.filter(
            kind__in=COUNTED_KINDS, started_at__gte=since, started_at__lte=now
        )
        .annotate(minute=TruncMinute("started_at", tzinfo=UTC), endpoint=endpoint_of)
        .values("minute", "endpoint")
        .annotate(sends=Count("attempt_id"), successes=Count("attempt_id", filter=ANSWERED_2XX))
    }
    endpoints = list(Endpoint.objects.values_list("pk", flat=True))
    rows = []
    minutes = 0
    minute = since
    while minute <= now:
        minutes += 1
        for endpoint in endpoints:
            found = counted.get((minute, endpoint), {})
            rows.append(EndpointMinute(
                endpoint_id=endpoint, minute=minute, rolled_up_at=now,
                sends=found.get("sends", 0), successes=found.get("successes", 0),
            ))
        minute += timedelta(minutes=1)
    EndpointMinute.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["minute", "endpoint"],
        update_fields=["sends", "successes", "rolled_up_at"], batch_size=500,
    )
    EndpointMinute.objects.filter(minute__lt=oldest).delete()
    return RollUp(since=since, minutes=minutes, sends=sum(row.sends for row in rows))
