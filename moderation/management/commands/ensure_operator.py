import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Make sure an operator (superuser) exists; a new one's login is printed once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="operator")
        # bin/serve knows where the console answers; a bare path is all a command knows.
        parser.add_argument("--login-url", default="/console/login/")

    def handle(self, *args, username: str, login_url: str, **options) -> None:
        users = get_user_model()
        existing = users.objects.filter(is_superuser=True).order_by("pk").first()
        if existing is not None:
            name = existing.get_username()
            self.stdout.write(
                f"An operator account exists ({name}); log in at {login_url}. "
                f"Forgot its password? Set a new one with "
                f'`make manage ARGS="changepassword {name}"`.'
            )
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            f"Operator created. Log in at {login_url} as {username} with password "
            f"{password} (shown once; change it with "
            f'`make manage ARGS="changepassword {username}"`).'
        )
