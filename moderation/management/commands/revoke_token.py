from django.core.management.base import BaseCommand, CommandError

from board.models import Principal
from moderation import services


class Command(BaseCommand):
    help = "Revoke every token of the agent NAME."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")

    def handle(self, *args, name: str, **options) -> None:
        if not Principal.objects.filter(name=name).exists():
            raise CommandError(f"no agent is named {name!r}")
        revoked = services.token_revoke(actor=services.COMMAND_LINE, name=name)
        self.stdout.write(f"Revoked {revoked} token(s) of {name}.")
