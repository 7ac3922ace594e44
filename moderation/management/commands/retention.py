"""`python manage.py retention show [--json] | set POLICY DURATION [--principal NAME] |
clear POLICY [--principal NAME]` (SPEC 8.1, 10), through moderation.actions (audited)."""

import json
import re

from django.core.management.base import BaseCommand, CommandError

from board.retention import policies as retention
from moderation import actions


class Command(BaseCommand):
    help = "Show, set or clear the retention policies (SPEC 8.1)."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        show = actions.add_parser("show", help="every policy, its value and source")
        show.add_argument("--json", action="store_true")
        change = actions.add_parser("set", help="set a policy's value")
        change.add_argument("policy")
        change.add_argument("duration")
        change.add_argument("--principal", default=None)
        # A duration such as `-1h` is a value to refuse in one line naming the policy, not
        # an unknown option: argparse takes only bare negative numbers (`-1`) for values,
        # by this pattern of its own (the same attribute in Python 3.11 to 3.13).
        change._negative_number_matcher = re.compile(r"-\.?\d")
        clear = actions.add_parser("clear", help="return a policy to its default")
        clear.add_argument("policy")
        clear.add_argument("--principal", default=None)

    def handle(self, *args, action: str, **options) -> None:
        try:
            getattr(self, f"_{action}")(**options)
        except retention.PolicyRefused as refused:
            raise CommandError(str(refused)) from None

    def _show(self, *, json: bool = False, **options) -> None:  # noqa: A002 - the flag
        current = retention.retention_current(fresh=True)
        overrides = retention.entry_overrides()
        if json:
            shown = {
                name: {"value": value.seconds, "source": value.source}
                for name, value in current.items()
            }
            shown[retention.ENTRY]["overrides"] = overrides
            self.stdout.write(_json(shown))
            return
        for name, value in current.items():
            line = f"{name}: {retention.duration_words(value.seconds)} ({value.source})"
            if name == retention.ENTRY and overrides:
                line += f", overridden by {len(overrides)} principal(s)"
            self.stdout.write(line)
        for name, seconds in overrides.items():
            self.stdout.write(f"  entry for {name}: {retention.duration_words(seconds)}")

    def _set(self, *, policy: str, duration: str, principal: str | None, **options) -> None:
        seconds = retention.duration_parse(policy, duration)
        change = actions.retention_set(
            actor=actions.COMMAND_LINE, policy=policy, seconds=seconds, principal=principal
        )
        self.stdout.write(_changed(change))

    def _clear(self, *, policy: str, principal: str | None, **options) -> None:
        change = actions.retention_clear(
            actor=actions.COMMAND_LINE, policy=policy, principal=principal
        )
        self.stdout.write(_changed(change))


def _json(value) -> str:
    return json.dumps(value, sort_keys=True)


def _changed(change: retention.Change) -> str:
    who = f" for {change.principal}" if change.principal else ""
    return (
        f"{change.policy}{who}: {change.before.seconds}s ({change.before.source}) -> "
        f"{change.after.seconds}s ({change.after.source})"
    )
