from django.core.management.base import BaseCommand, CommandError

from board import services as board
from moderation import actions


class Command(BaseCommand):
    help = "Pause or resume posting (with a reason), or show whether it is paused."

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["pause", "resume", "status"])
        parser.add_argument("--reason", default="")

    def handle(self, *args, action: str, reason: str, **options) -> None:
        try:
            if action == "pause":
                actions.posting_pause(actor=actions.COMMAND_LINE, reason=reason)
            elif action == "resume":
                actions.posting_resume(actor=actions.COMMAND_LINE, reason=reason)
        except actions.ReasonRequired as error:
            raise CommandError(f"{error}: --reason TEXT") from None
        policy = board.posting_policy_current()
        if policy.paused:
            self.stdout.write(f"Posting is paused: {policy.pause_reason}")
        else:
            self.stdout.write("Posting is open.")
