"""What the console reads. Nothing here writes; every function answers in a fixed number
of queries however many entries, attempts or events there are (the pages depend on it)."""

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, Prefetch, Q, QuerySet

from board import selectors as board_selectors
from board.models import AgentToken, Entry, Principal
from board.posting.callers import ANONYMOUS_SCOPE
from board.selectors import created_between
from board.services import POST_ENTRY
from maintenance.activity import KINDS, activity_recent
from maintenance.deliveries import selectors as delivery_selectors
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from moderation.models import AuditEvent
from receipts import selectors as receipt_selectors
from receipts.models import Receipt, of_results

# --- Dashboard ---------------------------------------------------------------------------

WINDOWS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}

# Past this many, a count of a table that grows is not finished: the page says "more
# than 10,000" (SPEC 11.7), and the count costs the same at any size.
COUNT_BOUND = 10_000


class Bounded(int):
    """A count stopped at a bound: an int (exact below the bound), `exceeded` when there
    were more, and then shown as "more than N"."""

    exceeded: bool

    def __new__(cls, count: int, exceeded: bool = False) -> "Bounded":
        found = super().__new__(cls, count)
        found.exceeded = exceeded
        return found

    def __str__(self) -> str:
        return f"more than {int(self):,}" if self.exceeded else str(int(self))

    def __repr__(self) -> str:
        return f"Bounded({int(self)}, exceeded={self.exceeded})"


def bounded_count(queryset: QuerySet, *, bound: int | None = None) -> Bounded:
    """Count at most `bound` + 1 rows of `queryset` (by its index), so the answer is exact
    up to the bound and "more than" past it."""
    bound = COUNT_BOUND if bound is None else bound
    found = queryset.values("pk")[: bound + 1].count()
    return Bounded(bound, exceeded=True) if found > bound else Bounded(found)


@dataclass(frozen=True)
class WindowCounts:
    new: int
    replayed: int
    conflicts: int
    rate_limited: int
    unknown_deliveries: Bounded


@dataclass(frozen=True)
class HourCount:
    hour: datetime
    count: int


@dataclass(frozen=True)
class Dashboard:
    counts: dict[str, WindowCounts]
    hours: list[HourCount]
    # When the rollup was last brought up to date; None before its job first ran.
    rolled_up_at: datetime | None


def dashboard_figures(*, now: datetime, hours: int = 48) -> Dashboard:
    """The last hour's and day's attempts by outcome and posts per hour over `hours`, from
    the per-minute rollup (maintenance/activity.py), and the deliveries made in each
    window whose outcome is unknown now, counted by the state index up to a bound."""
    activity = activity_recent(now=now)
    counts = {}
    for window, length in WINDOWS.items():
        # A minute counts when it began within the window: exact to the minute.
        since = now - length
        inside = [row for row in activity.minutes if row.minute > since - timedelta(minutes=1)]
        counts[window] = WindowCounts(
            **{kind: sum(getattr(row, kind) for row in inside) for kind in KINDS},
            unknown_deliveries=bounded_count(Delivery.objects.filter(
                state=Delivery.State.OUTCOME_UNKNOWN, created_at__gt=since, created_at__lte=now,
            )),
        )
    this_hour = now.replace(minute=0, second=0, microsecond=0)
    first = this_hour - timedelta(hours=hours - 1)
    by_hour: dict[datetime, int] = {}
    for row in activity.minutes:
        hour = row.minute.astimezone(UTC).replace(minute=0)
        by_hour[hour] = by_hour.get(hour, 0) + row.posts
    return Dashboard(
        counts=counts,
        hours=[
            HourCount(hour=h, count=by_hour.get(h, 0))
            for h in (first + timedelta(hours=i) for i in range(hours))
        ],
        rolled_up_at=activity.rolled_up_at,
    )


# --- Deliveries (SPEC 9) -------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryRow:
    """A delivery as the console shows it: its evidence, and the entry it announces
    (None once the entry is purged; deliveries keep the id as a plain value)."""

    delivery: Delivery
    attempts: list[DeliveryAttempt]
    entry: Entry | None
    age: timedelta


def _with_evidence(deliveries: QuerySet[Delivery]) -> QuerySet[Delivery]:
    attempts = DeliveryAttempt.objects.order_by("started_at", "attempt_id")
    return deliveries.prefetch_related(Prefetch("attempt_log", queryset=attempts))


def delivery_rows(deliveries, *, now: datetime) -> list[DeliveryRow]:
    """Rows for a page of deliveries, their attempts and entries read in two queries."""
    found = list(deliveries)
    entries = Entry.objects.in_bulk({delivery.entry_id for delivery in found})
    return [
        DeliveryRow(
            delivery=delivery,
            attempts=list(delivery.attempt_log.all()),
            entry=entries.get(delivery.entry_id),
            age=now - delivery.created_at,
        )
        for delivery in found
    ]


def delivery_inbox() -> QuerySet[Delivery]:
    """The unknown-outcome inbox, its endpoint and attempts prefetched: page it, then make
    rows with `delivery_rows`."""
    return delivery_selectors.deliveries_unknown()


# The inbox's size is counted exactly up to here, and said as "more than" past it: the
# count reads at most one row more than this, however large the inbox grows.
INBOX_COUNTED_UP_TO = 10_000


def delivery_inbox_size() -> int:
    """The inbox's size, at most INBOX_COUNTED_UP_TO + 1 (read: more than the bound)."""
    return delivery_selectors.deliveries_unknown_count(limit=INBOX_COUNTED_UP_TO + 1)


def deliveries_listed(*, state: str = "", endpoint: str = "") -> QuerySet[Delivery]:
    """Deliveries newest first, filtered, with their attempts (page them, then make rows)."""
    found = delivery_selectors.deliveries_filtered(
        state=state or None, endpoint=endpoint or None
    )
    return _with_evidence(found)


def deliveries_for_entries(*, entry_ids: list[int], now: datetime) -> dict[int, list[DeliveryRow]]:
    """What each entry's announcements came to, for the operations page."""
    rows = delivery_rows(
        _with_evidence(
            Delivery.objects.select_related("endpoint")
            .filter(entry_id__in=entry_ids)
            .order_by("created_at", "id")
        ),
        now=now,
    )
    by_entry: dict[int, list[DeliveryRow]] = {}
    for row in rows:
        by_entry.setdefault(row.delivery.entry_id, []).append(row)
    return by_entry


@dataclass(frozen=True)
class DeliveryCounts:
    unknown: Bounded
    endpoints_disabled: int


def delivery_counts() -> DeliveryCounts:
    """What waits for an operator: the inbox (counted up to a bound) and the endpoints
    that stopped."""
    return DeliveryCounts(
        unknown=bounded_count(Delivery.objects.filter(state=Delivery.State.OUTCOME_UNKNOWN)),
        endpoints_disabled=delivery_selectors.endpoints_disabled_count(),
    )


# --- Entries -----------------------------------------------------------------------------

VISIBILITIES = ("public", "hidden", "deleted")


def entry_search(
    *,
    type: str = "",
    visibility: str = "",
    actor: str = "",
    text: str = "",
    created_from: date | None = None,
    created_to: date | None = None,
    held_text: bool = True,
) -> QuerySet[Entry]:
    """Entries for the console, every state included unless filtered; page them newest
    first by id (moderation.console.keyset). Each filter is served by an index whose order
    is the list's: hidden and deleted by partial indexes on id, type by (type, id), the
    actor (its exact name) by (actor_name, id), days by the id range they span, text by
    the engine's search index (board.selectors), stopping at the newest SEARCH_MATCHES_SHOWN.
    Without `held_text` (not an administrator), the text and actor a hold keeps on a
    deleted entry are not searched (SPEC 8.2: administrators only)."""
    entries = Entry.objects.select_related("principal")
    if type:
        entries = entries.filter(type=type)
    if visibility == "public":
        entries = entries.filter(visible=True, deleted_at__isnull=True)
    elif visibility == "hidden":
        entries = entries.filter(visible=False, deleted_at__isnull=True)
    elif visibility == "deleted":
        entries = entries.filter(deleted_at__isnull=False)
    if (actor or text) and not held_text:
        entries = entries.filter(deleted_at__isnull=True)
    if actor:
        entries = entries.filter(actor_name=actor)
    # Days by the id range they span (ids grow with creation time), found by halving
    # the ids and checked against created_at: the list keeps its id order.
    if created_from or created_to:
        since = _day_start(created_from) if created_from else None
        before = _day_start(created_to) + timedelta(days=1) if created_to else None
        entries = entries.filter(created_between(since, before))
    if text:
        matches = board_selectors.text_matching(entries, text).order_by("-id")
        entries = Entry.objects.select_related("principal").filter(
            id__in=matches.values("id")[: board_selectors.SEARCH_MATCHES_SHOWN]
        )
    return entries


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def request_ids_for_entries(*, entry_ids: list[int]) -> dict[int, uuid.UUID]:
    """The request_id that made each entry, for linking a row to its operation."""
    rows = Receipt.objects.filter(of_results(entry_ids), operation=POST_ENTRY).values_list(
        "result_id", "request_id"
    )
    return dict(rows)


@dataclass(frozen=True)
class ConsoleThread:
    question: Entry
    replies: list[Entry]


def thread_for_console(*, entry_id: int) -> ConsoleThread:
    """The whole thread an entry belongs to, hidden and deleted entries included."""
    entry = Entry.objects.select_related("parent").get(pk=entry_id)
    question = entry.parent if entry.type == Entry.Type.REPLY else entry
    replies = list(Entry.objects.select_related("principal").filter(parent=question).order_by("id"))
    return ConsoleThread(question=question, replies=replies)


# --- Operations --------------------------------------------------------------------------


@dataclass(frozen=True)
class OperationFound:
    trace: receipt_selectors.ScopeTrace
    caller: str
    entry: Entry | None
    # What announcing the entry came to (SPEC 9); kept after the entry itself is purged.
    deliveries: list[DeliveryRow]


def operation_lookup(*, request_id: uuid.UUID, now: datetime) -> list[OperationFound]:
    """A `request_id` in every scope: the anonymous one and each principal's.

    Attempts and tombstones are found by one identity digest per scope, computed in
    Python and looked up in one query: cheap for the hundreds of agents an operator
    issues tokens to, and nothing of the request is kept in the clear to search by.
    """
    names = dict(Principal.objects.values_list("pk", "name"))
    scope_names = {Principal(pk=pk).scope: name for pk, name in names.items()}
    scope_names[ANONYMOUS_SCOPE] = "anonymous"
    traces = receipt_selectors.request_trace(
        request_id=request_id, operation=POST_ENTRY, scopes=scope_names, now=now
    )
    entry_ids = [t.receipt.result_id for t in traces if t.receipt and t.receipt.result_id]
    entries = Entry.objects.in_bulk(entry_ids)
    announced = deliveries_for_entries(entry_ids=entry_ids, now=now) if entry_ids else {}
    return [
        OperationFound(
            trace=t,
            caller=scope_names.get(t.scope, t.scope),
            entry=entries.get(t.receipt.result_id) if t.receipt else None,
            deliveries=announced.get(t.receipt.result_id, []) if t.receipt else [],
        )
        for t in traces
    ]


# --- Tokens and audit --------------------------------------------------------------------


def principals_with_tokens() -> QuerySet[Principal]:
    # Newest token first, so the one an operator just issued is at the top of its agent.
    tokens = Prefetch("tokens", queryset=AgentToken.objects.order_by("-created_at", "-id"))
    live = Count("tokens", filter=Q(tokens__revoked_at__isnull=True))
    return Principal.objects.order_by("name").annotate(live_tokens=live).prefetch_related(tokens)


def audit_events(*, actor: str = "", action: str = "") -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.order_by("-created_at", "-id")
    if actor:
        events = events.filter(actor=actor)
    if action:
        events = events.filter(action=action)
    return events


def audit_filter_choices() -> tuple[list[str], list[str]]:
    """The operators and actions that appear in the log, for the filter menus."""
    return _values_by_index("actor"), _values_by_index("action")


def _values_by_index(field: str) -> list[str]:
    """The field's distinct values, each found by one seek on the index it leads
    (`audit_actor_newest`, `audit_action_newest`): a few operators and actions, however
    long the log. `DISTINCT` would read the whole index (neither engine skips ahead)."""
    values: list[str] = []
    events = AuditEvent.objects.order_by(field).values_list(field, flat=True)
    found = events.first()
    while found is not None:
        values.append(found)
        found = events.filter(**{f"{field}__gt": found}).first()
    return values
