"""`python manage.py hold add (--thread ID | --principal NAME) --reason TEXT | list [--json]
| release HOLD_ID --reason TEXT` (SPEC 8.2, 10), through moderation.actions (audited)."""

import json

from django.core.management.base import BaseCommand, CommandError

from board.retention.holds import HoldRefused, holds_active
from moderation import actions


class Command(BaseCommand):
    help = "Place, list and release holds that keep threads from every purge (SPEC 8.2)."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="place a hold; prints its id")
        target = add.add_mutually_exclusive_group(required=True)
        target.add_argument("--thread", type=int, default=None)
        target.add_argument("--principal", default=None)
        add.add_argument("--reason", default="")
        listing = actions.add_parser("list", help="the active holds")
        listing.add_argument("--json", action="store_true")
        release = actions.add_parser("release", help="release a hold")
        release.add_argument("hold_id", type=int)
        release.add_argument("--reason", default="")

    def handle(self, *args, action: str, **options) -> None:
        try:
            getattr(self, f"_{action}")(**options)
        except HoldRefused as refused:
            raise CommandError(str(refused)) from None

    def _add(self, *, thread: int | None, principal: str | None, reason: str, **options):
        hold = actions.hold_add(
            actor=actions.COMMAND_LINE, reason=reason, thread_id=thread, principal=principal
        )
        covers = f"thread {hold.thread_id}" if hold.thread_id else f"principal {principal}"
        self.stderr.write(f"Hold placed on {covers}:")
        self.stdout.write(str(hold.pk))

    def _list(self, *, json: bool = False, **options):  # noqa: A002 - the flag's name
        for hold in holds_active().order_by("id"):
            row = hold_row(hold)
            if json:
                self.stdout.write(_json(row))
                continue
            covers = f"thread {row['thread']}" if row["thread"] else f"principal {row['principal']}"
            self.stdout.write(f"{row['id']}  {covers}  {row['created_at']}  {row['reason']}")

    def _release(self, *, hold_id: int, reason: str, **options):
        hold = actions.hold_release(
            actor=actions.COMMAND_LINE, hold_id=hold_id, reason=reason
        )
        self.stdout.write(f"Hold {hold.pk} released.")


def hold_row(hold) -> dict:
    return {
        "id": hold.pk,
        "thread": hold.thread_id,
        "principal": hold.principal.name if hold.principal else None,
        "reason": hold.reason,
        "created_at": hold.created_at.isoformat(),
    }


def _json(value) -> str:
    return json.dumps(value, sort_keys=True)
