"""`python manage.py deliveries list|show|reconcile|resend|cancel|mark|run` (SPEC 10):
outbound deliveries, through moderation.actions (which audits) onto maintenance."""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from board.entries.objects import timestamp
from maintenance.deliveries import selectors, sweep
from maintenance.deliveries.models import Delivery
from maintenance.exceptions import DeliveryRefused
from moderation import actions


class Command(BaseCommand):
    help = "List, inspect and settle outbound deliveries (SPEC 9)."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        listing = actions.add_parser("list", help="deliveries, newest first")
        listing.add_argument("--state", choices=Delivery.State.values, default=None)
        listing.add_argument("--endpoint", default=None)
        listing.add_argument("--json", action="store_true")
        show = actions.add_parser("show", help="one delivery with its attempts")
        show.add_argument("id")
        show.add_argument("--json", action="store_true")
        for name in ("reconcile", "resend", "cancel"):
            action = actions.add_parser(name)
            action.add_argument("id")
            action.add_argument("--reason", default="")
        mark = actions.add_parser("mark", help="settle by hand: succeeded or failed")
        mark.add_argument("id")
        mark.add_argument("state", choices=["succeeded", "failed"])
        mark.add_argument("--reason", default="")
        actions.add_parser("run", help="send, look up and sweep what is due now, here")

    def handle(self, *args, action: str, **options) -> None:
        try:
            getattr(self, f"_{action}")(**options)
        except DeliveryRefused as refused:
            raise CommandError(refused.message) from None

    def _list(self, *, state, endpoint, json: bool = False, **options):  # noqa: A002
        # Every attempt row, as `show` lists them (Delivery.attempts counts the schedule's).
        rows = selectors.deliveries_filtered(state=state, endpoint=endpoint).annotate(
            logged=Count("attempt_log")
        )
        for delivery in rows[:1000]:
            if json:
                self.stdout.write(_dumps(delivery_row(delivery)))
            else:
                self.stdout.write(
                    f"{delivery.pk}  {delivery.state:<16} {delivery.endpoint.name}  "
                    f"entry {delivery.entry_id}  attempts {delivery.logged}  "
                    f"created {timestamp(delivery.created_at)}"
                )

    def _show(self, *, id, json: bool = False, **options):  # noqa: A002
        delivery = selectors.delivery_get(id)
        if delivery is None:
            raise CommandError(f"no delivery with id {id}")
        row = delivery_row(delivery)
        if json:
            self.stdout.write(_dumps(row))
            return
        for key in ("id", "endpoint", "entry_id", "state"):
            self.stdout.write(f"{key}: {row[key]}")
        if row["next_attempt_at"]:
            self.stdout.write(f"next attempt: {row['next_attempt_at']}")
        self.stdout.write(f"attempts: {len(row['attempts'])}")
        if delivery.note:
            self.stdout.write(f"note: {delivery.note}")
        for attempt in row["attempts"]:
            self.stdout.write(
                f"  {attempt['started_at']}  {attempt['kind']:<9} "
                f"{attempt['status_code'] or attempt['error'] or 'in flight'}  "
                f"{attempt['duration_ms']} ms  attempt {attempt['attempt_id']}"
            )

    def _reconcile(self, *, id, reason, **options):  # noqa: A002
        delivery = actions.delivery_reconcile(
            actor=actions.COMMAND_LINE, delivery_id=id, reason=reason
        )
        self.stdout.write(f"Delivery {delivery.pk} is {delivery.state}.")

    def _resend(self, *, id, reason, **options):  # noqa: A002
        delivery = actions.delivery_resend(
            actor=actions.COMMAND_LINE, delivery_id=id, reason=reason
        )
        self.stdout.write(f"Delivery {delivery.pk} is {delivery.state}.")

    def _cancel(self, *, id, reason, **options):  # noqa: A002
        delivery = actions.delivery_cancel(
            actor=actions.COMMAND_LINE, delivery_id=id, reason=reason
        )
        self.stdout.write(f"Delivery {delivery.pk} is {delivery.state}.")

    def _mark(self, *, id, state, reason, **options):  # noqa: A002
        if not reason.strip():
            raise CommandError("a reason is required to mark a delivery: --reason TEXT")
        delivery = actions.delivery_mark(
            actor=actions.COMMAND_LINE, delivery_id=id, state=state, reason=reason
        )
        self.stdout.write(f"Delivery {delivery.pk} is {delivery.state}.")

    def _run(self, **options):
        counts = sweep.deliveries_sweep(inline=True)
        self.stdout.write(", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()))


def delivery_row(delivery: Delivery) -> dict:
    return {
        "id": str(delivery.pk),
        "endpoint": delivery.endpoint.name,
        "entry_id": delivery.entry_id,
        "state": delivery.state,
        "next_attempt_at": _next_attempt(delivery),
        "attempts": [
            {
                "attempt_id": str(attempt.attempt_id),
                "kind": attempt.kind,
                "started_at": timestamp(attempt.started_at),
                "duration_ms": attempt.duration_ms,
                "status_code": attempt.status_code,
                "error": attempt.error or None,
            }
            for attempt in selectors.delivery_attempts(delivery)
        ],
    }


def _next_attempt(delivery: Delivery) -> str | None:
    """When an accepted delivery is due again (a send or a lookup); None otherwise."""
    if delivery.state != Delivery.State.ACCEPTED or delivery.next_attempt_at is None:
        return None
    return timestamp(delivery.next_attempt_at)


def _dumps(value: dict) -> str:
    return json.dumps(value)
