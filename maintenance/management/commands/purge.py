"""`python manage.py purge [--dry-run [--at ISO-8601]] [--json]`: run every purge now (or
count what it would remove) and print the counts (SPEC 8, 8.3)."""

import json
import logging
import sys
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from board.celery import app
from board.retention.moments import aware_moment
from maintenance import forecast
from maintenance.purges import purge_jobs

log = logging.getLogger(__name__)


def _moment(text: str) -> datetime:
    try:
        return aware_moment(text)
    except ValueError as problem:
        raise CommandError(f"--at: {text!r} {problem}") from None


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items()) or "nothing"


class Command(BaseCommand):
    help = "Run every retention purge now (SPEC 8) and print the counts."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what would be removed, and remove nothing",
        )
        parser.add_argument(
            "--at", help="with --dry-run: count what a purge at this ISO-8601 time would remove"
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help='print only one JSON object: {job: {"removed": N, "held": N}}',
        )

    def handle(self, *args, dry_run: bool = False, at: str | None = None, **options):
        as_json = options["json"]
        if at and not dry_run:
            raise CommandError("--at needs --dry-run: a real purge runs at the current time")
        if dry_run:
            now = _moment(at) if at else timezone.now()
            try:
                report = forecast.purge_forecast(now=now)
            except OverflowError:  # a policy's span before `now` leaves the calendar
                raise CommandError(
                    f"--at: {at!r} is too far from today to count a purge at"
                ) from None
            if as_json:
                self.stdout.write(json.dumps(
                    {job: {"removed": n["removed"], "held": n["held"]} for job, n in report.items()}
                ))
                return
            for job, numbers in report.items():
                self.stdout.write(
                    f"{job}: would remove {_counts(numbers['counts'])}, held {numbers['held']}"
                )
            return
        self._run(as_json)

    def _run(self, as_json: bool) -> None:
        # The jobs are the beat schedule's: the same tasks, run here in this process, each
        # recording its run.
        app.loader.import_default_modules()
        report = {}
        for job, task_name in purge_jobs().items():
            outcome = app.tasks[task_name]()
            report[job] = {"removed": forecast.removed_count(job=job, counts=outcome["counts"])}
            line = f"{job}: removed {_counts(outcome['counts'])}"
            if outcome["error"]:
                line += f" (failed: {outcome['error']})"
            elif not outcome["complete"]:
                line += " (stopped at its time budget; the next run continues)"
            # With --json, standard output holds the JSON object alone: the rest is logged.
            if as_json:
                print(line, file=sys.stderr)
            else:
                self.stdout.write(line)
        # What a hold kept back: what a purge now would still remove but for the holds.
        held = forecast.purge_forecast(now=timezone.now())
        for job in report:
            report[job]["held"] = held[job]["held"]
        if as_json:
            self.stdout.write(json.dumps(report))
