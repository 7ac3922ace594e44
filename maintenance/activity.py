"""The dashboard's rollup: entries and write attempts counted per UTC minute.

Design note
-----------
The dashboard once counted the last two days of entries and attempts on every view: a
scan that grows with the traffic of a busy board (586 ms at 5 million entries, SPEC 11.7).
Counting as posts are written would cost every post a write to a shared hot row, and
issue 41 holds a post to its WAL; so a beat job counts instead, every minute
(`activity-roll-up` in board/settings.py), and the dashboard reads at most two days of
minutes: 2,880 small rows whatever the board holds. The price is that the dashboard is
up to a minute (plus the job's run) behind, which the page says.

Each run recounts every minute from a little before its last run (`LATE_COMMIT`) to now:
the entries by the range of ids those minutes hold (board/selectors.py: ids
grow with creation time, so no index on the entries' `created_at` costs each post its
WAL), the attempts by their `created_at` index. A post stamped before the last run but
committed after it is counted by the next one, and the work is a few minutes of traffic.
A beat that stopped for a day recounts at most `WINDOW` on its return. Rows are written
with an upsert, so two runs at once both end with the right counts.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Count, Max, Q
from django.db.models.functions import TruncMinute

from board.selectors import entries_created_within
from maintenance.models import ActivityMinute
from receipts.models import Attempt

# What the dashboard shows; older minutes are removed by the job.
WINDOW = timedelta(hours=48)
# A transaction stamps its rows when it starts and commits a moment later: a run recounts
# the minutes this far before its last one to take in what committed late.
LATE_COMMIT = timedelta(minutes=5)

# An attempt refused by the overall limit is logged by the receipt engine as `refused`
# with the refusal's code; the source limit logs `rate_limited` itself. Both count.
# Attempts that made an entry (`new`) have no row in the log: the receipt stands for it
# (receipts/models.py), and every one made an entry, so they are the entries counted.
ATTEMPT_KINDS = {
    "replayed": Q(outcome=Attempt.Outcome.REPLAYED),
    "conflicts": Q(outcome=Attempt.Outcome.CONFLICT),
    "rate_limited": Q(outcome=Attempt.Outcome.RATE_LIMITED)
    | Q(outcome=Attempt.Outcome.REFUSED, detail="rate_limited"),
}
# What the dashboard counts per window: new posts, then the attempts by outcome.
KINDS = ["new", *ATTEMPT_KINDS]
COUNTS = ["posts", *KINDS]


@dataclass(frozen=True)
class RollUp:
    since: datetime
    minutes: int
    posts: int


def minute_of(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def activity_roll_up(*, now: datetime) -> RollUp:
    """Count entries and attempts per minute from shortly before the last run to `now`
    (the whole `WINDOW` on the first run), and drop minutes older than the window."""
    oldest = minute_of(now - WINDOW)
    last = ActivityMinute.objects.aggregate(last=Max("rolled_up_at"))["last"]
    since = oldest if last is None else max(oldest, minute_of(min(last, now) - LATE_COMMIT))
    counted: dict[datetime, dict[str, int]] = {}
    posts = (
        entries_created_within(since, now)
        .annotate(minute=TruncMinute("created_at", tzinfo=UTC))
        .values("minute")
        .annotate(n=Count("id"))
        .values_list("minute", "n")
    )
    for minute, n in posts:
        counted.setdefault(minute, {}).update(posts=n, new=n)
    attempts = (
        Attempt.objects.filter(created_at__gte=since, created_at__lte=now)
        .annotate(minute=TruncMinute("created_at", tzinfo=UTC))
        .values("minute")
        .annotate(**{kind: Count("id", filter=q) for kind, q in ATTEMPT_KINDS.items()})
    )
    for row in attempts:
        counted.setdefault(row["minute"], {}).update(
            {kind: row[kind] for kind in ATTEMPT_KINDS}
        )
    # Every minute of the span gets a row, zeros included: a minute that had posts at
    # the last run and lost them since (a purge, a rolled-back post) is set back to zero.
    rows = []
    minute = since
    while minute <= now:
        found = counted.get(minute, {})
        rows.append(ActivityMinute(
            minute=minute, rolled_up_at=now, **{key: found.get(key, 0) for key in COUNTS}
        ))
        minute += timedelta(minutes=1)
    ActivityMinute.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["minute"],
        update_fields=[*COUNTS, "rolled_up_at"], batch_size=500,
    )
    ActivityMinute.objects.filter(minute__lt=oldest).delete()
    return RollUp(since=since, minutes=len(rows), posts=sum(row.posts for row in rows))


@dataclass(frozen=True)
class Activity:
    """What the rollup holds for the dashboard: counts per minute, oldest first, and
    when it was last brought up to date (None before the job's first run)."""

    minutes: list[ActivityMinute]
    rolled_up_at: datetime | None


def activity_recent(*, now: datetime) -> Activity:
    minutes = list(
        ActivityMinute.objects.filter(minute__gt=now - WINDOW, minute__lte=now).order_by("minute")
    )
    return Activity(
        minutes=minutes,
        rolled_up_at=max((row.rolled_up_at for row in minutes), default=None),
    )
