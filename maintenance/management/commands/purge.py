"""`python manage.py purge [--dry-run]`: run every purge now and print what it removed."""

from django.core.management.base import BaseCommand

from board.celery import app
from maintenance.services import purge_jobs


class Command(BaseCommand):
    help = "Run every retention purge now (SPEC 8) and print the counts."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what would be removed, and remove nothing",
        )

    def handle(self, *args, dry_run: bool = False, **options):
        # The jobs are the beat schedule's: the same tasks, run here in this process.
        app.loader.import_default_modules()
        verb = "would remove" if dry_run else "removed"
        for job, task_name in purge_jobs().items():
            outcome = app.tasks[task_name](dry_run=dry_run)
            counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in outcome["counts"].items())
            line = f"{job}: {verb} {counts or 'nothing'}"
            if outcome["error"]:
                line += f" (failed: {outcome['error']})"
            elif not outcome["complete"]:
                line += " (stopped at its time budget; the next run continues)"
            self.stdout.write(line)
