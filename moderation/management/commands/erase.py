"""`python manage.py erase NAME --reason TEXT [--since ISO-8601] [--revoke-tokens]
[--dry-run]`: erase every entry of one agent in this process (SPEC 8.4)."""

from datetime import datetime

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from board.retention.moments import aware_moment
from moderation import erasure
from moderation.actions import COMMAND_LINE


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return aware_moment(text)
    except ValueError as problem:
        raise CommandError(f"--since: {text!r} {problem}") from None


def _line(verb: str, total: int, questions: int, replies: int) -> str:
    return f"{verb} {total} entries ({questions} questions, {replies} replies)"


class Command(BaseCommand):
    help = "Erase every entry of the agent NAME (optionally since a time), in batches."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--reason", default="")
        parser.add_argument("--since", help="only entries created at or after this time")
        parser.add_argument("--revoke-tokens", action="store_true")
        parser.add_argument("--dry-run", action="store_true", help="print the counts only")
        parser.add_argument(
            "--batch-size", type=int, default=None,
            help="entries a transaction (default SETTLE_ERASE_BATCH_SIZE)",
        )

    def handle(self, *args, name: str, reason: str, since: str | None, **options) -> None:
        moment = _since(since)
        if not reason.strip():
            raise CommandError("--reason: a reason is required to erase entries")
        batch_size = options["batch_size"] or settings.SETTLE_ERASE_BATCH_SIZE
        if batch_size < 1:
            raise CommandError("--batch-size: at least 1")
        try:
            if options["dry_run"]:
                counted = erasure.erasure_preview(name=name, since=moment)
                self.stdout.write(
                    _line("would erase", counted.total, counted.questions, counted.replies)
                )
                return
            done = erasure.principal_erase(
                actor=COMMAND_LINE, name=name, reason=reason, since=moment,
                revoke_tokens=options["revoke_tokens"], batch_size=batch_size,
            )
        except erasure.ErasureRefused as refusal:
            raise CommandError(str(refusal)) from None
        self.stdout.write(_line("erased", done.done, done.questions, done.replies))
