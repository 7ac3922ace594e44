"""`python manage.py endpoint add|set-url|list|disable|enable|rotate` (SPEC 10): webhook
endpoints, through moderation.actions (which audits) onto maintenance.deliveries.endpoints."""

import json

from django.core.management.base import BaseCommand, CommandError

from maintenance.deliveries.models import Endpoint
from maintenance.exceptions import DeliveryRefused
from moderation import actions


class Command(BaseCommand):
    help = "Manage webhook endpoints: add, set-url, list, disable, enable, rotate (SPEC 9)."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="register an endpoint; prints its secret once")
        add.add_argument("name")
        add.add_argument("url")
        add.add_argument("--supports", choices=["dedupe", "lookup", "none"], default="none")
        add.add_argument("--lookup-url", default=None)
        add.add_argument("--allow-private", action="store_true")
        add.add_argument("--reason", default="")
        set_url = actions.add_parser(
            "set-url", help="point an endpoint at a new URL (checked as at add)"
        )
        set_url.add_argument("name")
        set_url.add_argument("url")
        set_url.add_argument("--lookup-url", default=None)
        set_url.add_argument("--allow-private", action="store_true")
        set_url.add_argument("--reason", default="")
        listing = actions.add_parser("list", help="every endpoint")
        listing.add_argument("--json", action="store_true")
        for name in ("disable", "enable", "rotate"):
            action = actions.add_parser(name)
            action.add_argument("name")
            action.add_argument("--reason", default="")

    def handle(self, *args, action: str, **options) -> None:
        try:
            getattr(self, f"_{action.replace('-', '_')}")(**options)
        except (DeliveryRefused, actions.ReasonRequired) as refused:
            raise CommandError(str(refused)) from None

    def _add(self, *, name, url, supports, lookup_url, allow_private, reason, **options):
        if allow_private and not reason.strip():
            raise CommandError("--allow-private needs --reason TEXT")
        endpoint, secret = actions.endpoint_add(
            actor=actions.COMMAND_LINE, name=name, url=url, supports=supports,
            lookup_url=lookup_url, allow_private=allow_private, reason=reason,
        )
        self.stderr.write(
            f"Endpoint {endpoint.name} added. Its secret is not shown again; give it to the "
            f"receiver:"
        )
        self.stdout.write(secret)

    def _set_url(self, *, name, url, lookup_url, allow_private, reason, **options):
        if allow_private and not reason.strip():
            raise CommandError("--allow-private needs --reason TEXT")
        endpoint, withdrawn = actions.endpoint_set_url(
            actor=actions.COMMAND_LINE, name=name, url=url, lookup_url=lookup_url,
            allow_private=allow_private, reason=reason,
        )
        self.stdout.write(f"Endpoint {endpoint.name} now sends to its new URL.")
        if withdrawn:
            self.stderr.write(
                "Its private-address allowance was for another host and is withdrawn "
                "(give --allow-private --reason again to keep it)."
            )

    def _list(self, *, json: bool = False, **options):  # noqa: A002 - the flag's name
        for endpoint in Endpoint.objects.order_by("name"):
            if json:
                self.stdout.write(_json(endpoint_row(endpoint)))
                continue
            state = "enabled" if endpoint.enabled else f"disabled ({endpoint.disabled_reason})"
            private = " allow-private" if endpoint.allow_private else ""
            self.stdout.write(
                f"{endpoint.name}  {endpoint.url}  supports={endpoint.supports}  {state}{private}"
            )

    def _disable(self, *, name, reason, **options):
        endpoint = actions.endpoint_disable(actor=actions.COMMAND_LINE, name=name, reason=reason)
        self.stdout.write(f"Endpoint {endpoint.name} disabled; its deliveries wait.")

    def _enable(self, *, name, reason, **options):
        endpoint = actions.endpoint_enable(actor=actions.COMMAND_LINE, name=name, reason=reason)
        self.stdout.write(f"Endpoint {endpoint.name} enabled.")

    def _rotate(self, *, name, reason, **options):
        endpoint, secret = actions.endpoint_rotate(
            actor=actions.COMMAND_LINE, name=name, reason=reason
        )
        self.stderr.write(
            f"New secret for {endpoint.name}; the previous one keeps signing for 24 hours:"
        )
        self.stdout.write(secret)


def endpoint_row(endpoint: Endpoint) -> dict:
    return {
        "name": endpoint.name,
        "url": endpoint.url,
        "enabled": endpoint.enabled,
        "supports": endpoint.supports,
        "allow_private": endpoint.allow_private,
    }


def _json(value: dict) -> str:
    return json.dumps(value, sort_keys=False)
