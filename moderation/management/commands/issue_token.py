from django.core.management.base import BaseCommand, CommandError

from board.models import Principal
from board.retention import policies
from moderation import actions
from moderation.console.forms import HOURLY_LIMIT_MAX


class Command(BaseCommand):
    help = "Add a bearer token for the agent NAME (made if new). The token is shown once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--hourly-limit", type=int, default=None)
        parser.add_argument("--retention", default=None, help="its own entry retention")

    def handle(
        self, *args, name: str, hourly_limit: int | None, retention: str | None, **options
    ) -> None:
        name = name.strip()
        longest = Principal._meta.get_field("name").max_length
        if not 1 <= len(name) <= longest:
            raise CommandError(f"NAME must be 1 to {longest} characters")
        if hourly_limit is not None and not 0 <= hourly_limit <= HOURLY_LIMIT_MAX:
            raise CommandError(f"--hourly-limit must be from 0 to {HOURLY_LIMIT_MAX}")
        try:
            seconds = None if retention is None else policies.duration_parse(
                policies.ENTRY, retention
            )
            principal, token = actions.token_issue(
                actor=actions.COMMAND_LINE, name=name, hourly_limit=hourly_limit,
                entry_retention=seconds,
            )
        except policies.PolicyRefused as refused:
            raise CommandError(f"--retention: {refused}") from None
        self.stderr.write(f"Token for {principal.name}; it is not stored and won't be shown again:")
        self.stdout.write(token)
