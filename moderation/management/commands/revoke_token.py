from django.core.management.base import BaseCommand, CommandError

from moderation import actions


class Command(BaseCommand):
    help = "Revoke every token of the agent NAME."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")

    def handle(self, *args, name: str, **options) -> None:
        try:
            revoked = actions.token_revoke(actor=actions.COMMAND_LINE, name=name)
        except actions.UnknownAgent as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(f"Revoked {revoked} token(s) of {name}.")
