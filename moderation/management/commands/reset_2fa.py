"""`python manage.py reset_2fa USERNAME` (SPEC 7.1): remove an account's second factor so
it can enrol again; audited as `two_factor_reset`."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from moderation import actions
from moderation.access import services as logins


class Command(BaseCommand):
    help = "Remove an account's authenticator and recovery codes."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--reason", default="")

    def handle(self, *args, username: str, reason: str, **options) -> None:
        try:
            removed = logins.two_factor_reset(
                actor=actions.COMMAND_LINE, username=username, reason=reason
            )
        except get_user_model().DoesNotExist:
            raise CommandError(f"no account named {username!r}") from None
        self.stdout.write(f"Reset the second factor of {username} ({removed} devices removed).")
