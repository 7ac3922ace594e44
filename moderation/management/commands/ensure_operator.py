import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Make sure an operator (superuser) exists; a new one's login is printed once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="operator")

    def handle(self, *args, username: str, **options) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("An operator account exists; log in at /console/login/.")
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            f"Operator created. Log in at /console/login/ as {username} with password "
            f"{password} (shown once; change it with `manage.py changepassword {username}`)."
        )
