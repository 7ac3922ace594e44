"""`python manage.py unlock_login USERNAME [--address ADDRESS]` (SPEC 7.1): lift a login
lock before it ends by itself, audited as `login_unlocked`."""

from django.core.management.base import BaseCommand

from moderation import actions
from moderation.access import throttling


class Command(BaseCommand):
    help = (
        "Forget a username's failed logins, its browsers' (device cookies) included "
        "(and an address's, with --address)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--address", default="", help="also lift this client address's lock")
        parser.add_argument("--reason", default="")

    def handle(self, *args, username: str, address: str, reason: str, **options) -> None:
        forgotten = throttling.login_unlock(
            actor=actions.COMMAND_LINE, username=username, address=address, reason=reason
        )
        what = f"{username}" + (f" and {address}" if address else "")
        self.stdout.write(f"Unlocked {what} ({forgotten} failure record{'s'[:forgotten != 1]}).")
