"""The retention page's chart of receipts expiring per day (SPEC 8.3), from a rollup.

Design note
-----------
Counting the receipts that expire in the next 30 days counts, at the default 30-day
retention, every live receipt: 2.64 s at 5 million entries, more as the board grows
(SPEC 11.7). A receipt's `receipt_expires_at` is fixed when it is written, so the count
can be kept instead, in `ExpiringReceipts`: receipts per minute written and minute they
expire, and, in `deleted` rows, receipts per minute deleted and minute they were to
expire. Counting as posts are written would cost every post a write to a shared row and
its WAL; so the forecast job keeps it, just before it reads it (`expiring_roll_up`), and
no index is added to entries or receipts.

Each run recounts every minute from a little before the last one it counted
(`LATE_COMMIT`, as the dashboard's rollup does) to now: the entries written in those
minutes by the range of ids they hold (board/selectors.py) and their
receipts by the entries' ids (`of_results_apart`: a receipt's id is its entry's, or
`receipt_result_id_older` for one made before), and the receipts deleted in them by
`receipt_deleted`. A receipt is written in its entry's transaction with the entry's own
`created_at` as its `first_seen_at`, so both name the same minute. The work is the posts
and deletes of those minutes, whatever the board holds. Rows are written with an upsert,
so two runs at once neither fail nor count twice; rows whose expiry is before today are
dropped. The first run, finding no rows, counts the live receipts once: a one-time cost
of what the board holds.

The chart (`expiring_by_day`) sums the rows of the whole minutes between now and 30
days on by the UTC day each row keeps (`expires_on`: SQLite would compute a date for
each row in Python), less the deleted ones: a receipt's `deleted` row stays after the deletion purge
removes it, so one deleted early is not counted at its old expiry. The two part minutes
at the ends are counted from the receipts themselves (at most a minute of expiries
each), and a deleted receipt is counted at `deleted_at` plus the `deletion` policy in
force now, by `receipt_deleted`, as the purges go by it.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Count, Max, Q, Sum
from django.db.models.functions import TruncMinute

from board.retention import policies as retention
from board.selectors import entries_created_within
from board.services import POST_ENTRY
from maintenance.activity import LATE_COMMIT, minute_of
from maintenance.models import ExpiringReceipts
from receipts.models import Receipt, of_results_apart

MINUTE = timedelta(minutes=1)
UPSERT_BATCH = 500


@dataclass(frozen=True)
class RollUp:
    since: datetime | None  # None: the first run, which counted every live receipt
    rows: int


def expiring_roll_up(*, now: datetime) -> RollUp:
    """Count the receipts written and deleted per minute from shortly before the last
    minute counted to `now` (every live receipt on the first run), by the minute they
    expire, and drop the rows of days gone by."""
    # The last minute counted, by the unique index: no run counted anything after it.
    last = ExpiringReceipts.objects.aggregate(last=Max("minute"))["last"]
    receipts = Receipt.objects.filter(operation=POST_ENTRY)
    if last is None:
        since = None
        written = [receipts.filter(receipt_expires_at__gt=now)]
        deleted = receipts.filter(deleted_at__isnull=False, receipt_expires_at__gt=now)
    else:
        since = minute_of(min(last, now) - LATE_COMMIT)
        entries = entries_created_within(since, now)
        written = [
            receipts.filter(arm, first_seen_at__gte=since, first_seen_at__lte=now)
            for arm in of_results_apart(entries.values("id"))
        ]
        deleted = receipts.filter(deleted_at__gte=since, deleted_at__lte=now)
    rows = [
        *_rows(_summed(_per_minute(each, "first_seen_at") for each in written), deleted=False,
               now=now),
        *_rows(_per_minute(deleted, "deleted_at"), deleted=True, now=now),
    ]
    # In the unique key's order: two runs at once lock the rows they share in one order.
    rows.sort(key=lambda row: (row.minute, row.deleted, row.expires_minute))
    # A transaction a batch: the first run's tens of thousands of rows never hold
    # SQLite's one writer for long.
    for at in range(0, len(rows), UPSERT_BATCH):
        ExpiringReceipts.objects.bulk_create(
            rows[at:at + UPSERT_BATCH], update_conflicts=True,
            unique_fields=["minute", "deleted", "expires_minute"],
            update_fields=["receipts", "rolled_up_at"],
        )
    ExpiringReceipts.objects.filter(expires_minute__lt=_midnight(now)).delete()
    return RollUp(since=since, rows=len(rows))


def _per_minute(receipts, moment: str):
    return (
        receipts.annotate(
            minute=TruncMinute(moment, tzinfo=UTC),
            expires_minute=TruncMinute("receipt_expires_at", tzinfo=UTC),
        )
        .values("minute", "expires_minute")
        .annotate(n=Count("id"))
        .values_list("minute", "expires_minute", "n")
    )


def _summed(counts: Iterable[Iterable]) -> list[tuple]:
    """Per-minute counts of disjoint sets of receipts, added up by minute."""
    summed: dict[tuple, int] = {}
    for counted in counts:
        for minute, expires, n in counted:
            summed[minute, expires] = summed.get((minute, expires), 0) + n
    return [(minute, expires, n) for (minute, expires), n in summed.items()]


def _rows(counted: Iterable, *, deleted: bool, now: datetime) -> list[ExpiringReceipts]:
    return [
        ExpiringReceipts(
            minute=minute, deleted=deleted, expires_minute=expires,
            expires_on=expires.astimezone(UTC).date(), receipts=n, rolled_up_at=now,
        )
        for minute, expires, n in counted
    ]


def expiring_by_day(*, now: datetime, days: int = 30) -> list[tuple[datetime, int]]:
    """Receipts that expire within the next `days` days (after `now`, up to `now + days`),
    per UTC day, zeros included: `days + 1` bars, from the rollup as the last
    `expiring_roll_up` left it.

    No date is computed for each row (SQLite calls back into Python for it): the rollup
    keeps its rows' day, and deleted receipts are counted by ranges of `deleted_at`."""
    end = now + timedelta(days=days)
    bounds = [_midnight(now) + timedelta(days=offset) for offset in range(days + 2)]
    counts = [0] * (days + 1)
    # Whole minutes from the rollup; the part minutes at both ends from the receipts,
    # each within the first or the last day.
    first, last = minute_of(now) + MINUTE, minute_of(end)
    live = Receipt.objects.filter(operation=POST_ENTRY, deleted_at__isnull=True)
    if first >= last:
        counts[-1] += live.filter(receipt_expires_at__gt=now, receipt_expires_at__lte=end).count()
    else:
        rolled = (
            ExpiringReceipts.objects.filter(expires_minute__gte=first, expires_minute__lt=last)
            .values("expires_on")
            .annotate(
                written=Sum("receipts", filter=Q(deleted=False)),
                deleted=Sum("receipts", filter=Q(deleted=True)),
            )
            .values_list("expires_on", "written", "deleted")
        )
        offsets = {bounds[offset].date(): offset for offset in range(days + 1)}
        for day, written, deleted in rolled:
            counts[offsets[day]] += (written or 0) - (deleted or 0)
        counts[0] += live.filter(receipt_expires_at__gt=now, receipt_expires_at__lt=first).count()
        counts[-1] += live.filter(
            receipt_expires_at__gte=last, receipt_expires_at__lte=end
        ).count()
    # A deleted receipt on the day of `deleted_at` plus the deletion policy, by ranges of
    # `deleted_at` alone, so PostgreSQL answers from the index without the table.
    deletion = retention.policy_in_force(retention.DELETION, fresh=True).duration
    shifted = Receipt.objects.filter(
        deleted_at__isnull=False, deleted_at__gt=now - deletion, deleted_at__lte=end - deletion,
    ).aggregate(**{
        f"on_{offset}": Count("id", filter=Q(
            deleted_at__gte=bounds[offset] - deletion, deleted_at__lt=bounds[offset + 1] - deletion
        ))
        for offset in range(days + 1)
    })
    for offset in range(days + 1):
        counts[offset] += shifted[f"on_{offset}"]
    return list(zip(bounds[:-1], counts, strict=True))


def _midnight(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
