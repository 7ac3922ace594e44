"""`manage.py endpoint ...` and `manage.py deliveries ...` (SPEC 10), audited."""

import json
import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from board.entries.objects import timestamp
from maintenance.deliveries import sweep
from maintenance.deliveries.models import Delivery, Endpoint
from moderation.models import AuditEvent
from tests.celery_worker import ROOT, test_database_url
from tests.maintenance.conftest import delivery_of, drive, post_entry
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def run(*args) -> str:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def add_receiver_endpoint(receiver, *extra) -> str:
    output = run(
        "endpoint", "add", "hooks", receiver.url, "--allow-private",
        "--reason", "test receiver on loopback", *extra,
    )
    secret = output.strip().splitlines()[-1]
    receiver.secrets.append(secret)
    return secret


def test_endpoint_add_prints_a_working_secret_alone_on_the_last_line(receiver):
    secret = add_receiver_endpoint(receiver, "--supports", "dedupe")

    assert secret.startswith("whsec_")
    delivery = drive(delivery_of(post_entry()))
    assert delivery.state == "succeeded" and receiver.posts()[0].verified
    event = AuditEvent.objects.get(action="endpoint_add")
    assert event.reason == "test receiver on loopback"
    assert secret not in str(event.details)


def test_endpoint_list_json_prints_one_object_a_line(receiver):
    add_receiver_endpoint(receiver, "--supports", "lookup", "--lookup-url", receiver.lookup_url)
    run("endpoint", "add", "other", "https://hooks.example/x")

    lines = run("endpoint", "list", "--json").strip().splitlines()

    assert [json.loads(line) for line in lines] == [
        {"name": "hooks", "url": receiver.url, "enabled": True, "supports": "lookup",
         "allow_private": True},
        {"name": "other", "url": "https://hooks.example/x", "enabled": True,
         "supports": "none", "allow_private": False},
    ]


def test_endpoint_disable_enable_and_rotate(receiver):
    first = add_receiver_endpoint(receiver)

    run("endpoint", "disable", "hooks", "--reason", "receiver down")
    assert Endpoint.objects.get().enabled is False
    run("endpoint", "enable", "hooks")
    assert Endpoint.objects.get().enabled is True
    second = run("endpoint", "rotate", "hooks").strip().splitlines()[-1]

    assert second.startswith("whsec_") and second != first
    assert Endpoint.objects.get().previous_secret == first
    assert list(AuditEvent.objects.order_by("id").values_list("action", flat=True)) == [
        "endpoint_add", "endpoint_disable", "endpoint_enable", "endpoint_rotate"
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("endpoint", "add", "x", "http://hooks.example/x"),
        ("endpoint", "add", "x", "https://hooks.example/x", "--allow-private"),
        ("endpoint", "disable", "nobody"),
        ("endpoint", "add", "x", "https://hooks.example/x", "--supports", "lookup"),
    ],
)
def test_endpoint_refusals_change_nothing(args):
    with pytest.raises(CommandError):
        run(*args)
    assert Endpoint.objects.count() == 0
    assert AuditEvent.objects.count() == 0


def test_endpoint_add_without_public_url_exits_non_zero_with_one_line():
    environment = {**os.environ, "DATABASE_URL": test_database_url(), "DEBUG": "true",
                   "SETTLE_PUBLIC_URL": ""}

    done = subprocess.run(
        [sys.executable, "manage.py", "endpoint", "add", "x", "https://hooks.example/x"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )

    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1
    assert "SETTLE_PUBLIC_URL" in done.stderr
    assert Endpoint.objects.count() == 0


def test_deliveries_list_and_show_json(receiver):
    add_receiver_endpoint(receiver)
    delivery = drive(delivery_of(post_entry()))

    [line] = run("deliveries", "list", "--json", "--state", "succeeded").strip().splitlines()
    shown = json.loads(run("deliveries", "show", str(delivery.pk), "--json"))

    assert json.loads(line) == shown
    assert shown["id"] == str(delivery.pk)
    assert shown["endpoint"] == "hooks"
    assert shown["entry_id"] == delivery.entry_id
    assert shown["state"] == "succeeded"
    [attempt] = shown["attempts"]
    assert set(attempt) >= {"attempt_id", "started_at", "duration_ms", "status_code", "error"}
    assert attempt["status_code"] == 200 and attempt["error"] is None
    assert run("deliveries", "list", "--json", "--state", "failed") == ""


def test_deliveries_mark_needs_a_reason_and_applies_to_unknown_outcomes(receiver):
    add_receiver_endpoint(receiver)
    receiver.script = [Behaviour(hang=True)]
    delivery = drive(delivery_of(post_entry()))
    assert delivery.state == "outcome_unknown"

    with pytest.raises(CommandError, match="reason"):
        run("deliveries", "mark", str(delivery.pk), "failed")
    assert Delivery.objects.get().state == "outcome_unknown"

    assert "failed" in run(
        "deliveries", "mark", str(delivery.pk), "failed", "--reason", "receiver lost it"
    )
    assert Delivery.objects.get().state == "failed"
    with pytest.raises(CommandError, match="not to failed"):
        run("deliveries", "cancel", str(delivery.pk))
    assert AuditEvent.objects.filter(action="delivery_mark_failed").count() == 1


def test_deliveries_resend_and_reconcile_are_one_off_attempts(receiver):
    add_receiver_endpoint(receiver, "--supports", "lookup", "--lookup-url", receiver.lookup_url)
    receiver.script = [Behaviour(close=True)]
    receiver.lookup_status = 503
    delivery = delivery_of(post_entry())
    drive(delivery, seconds=3)  # sent, lost, looked up (503): waits for its next lookup
    Delivery.objects.filter(pk=delivery.pk).update(deadline_at=delivery.created_at)
    run("deliveries", "run")
    assert Delivery.objects.get().state == "outcome_unknown"

    assert "outcome_unknown" in run("deliveries", "reconcile", str(delivery.pk))
    receiver.lookup_status = None
    receiver.notices.clear()
    assert "succeeded" in run("deliveries", "resend", str(delivery.pk))
    assert len(receiver.posts()) == 2
    assert [e.action for e in AuditEvent.objects.filter(target_type="delivery").order_by("id")] == [
        "delivery_reconcile", "delivery_resend"
    ]


def test_deliveries_run_sends_what_is_due_here(receiver):
    add_receiver_endpoint(receiver)
    entry = post_entry()

    output = run("deliveries", "run")

    assert "1 sent" in output
    assert delivery_of(entry).state == "succeeded"


def test_deliveries_show_refuses_an_unknown_id():
    with pytest.raises(CommandError, match="no delivery"):
        run("deliveries", "show", "00000000-0000-4000-8000-000000000000")
    with pytest.raises(CommandError):
        run("deliveries", "cancel", "not-a-uuid")


def _sent_lost_and_looked_up(receiver) -> Delivery:
    """A send whose connection was cut, then a lookup answered 503: two attempt rows, one
    attempt of the schedule, accepted and due again for its next lookup."""
    add_receiver_endpoint(receiver, "--supports", "lookup", "--lookup-url", receiver.lookup_url)
    receiver.script = [Behaviour(close=True)]
    receiver.lookup_status = 503
    delivery = delivery_of(post_entry())
    sweep.delivery_run(delivery_id=delivery.pk)
    sweep.delivery_run(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == "accepted" and delivery.next_attempt_at is not None
    assert delivery.attempt_log.count() == 2
    return delivery


def test_deliveries_list_counts_the_attempts_show_lists(receiver):
    delivery = _sent_lost_and_looked_up(receiver)

    [line] = run("deliveries", "list").strip().splitlines()
    shown = run("deliveries", "show", str(delivery.pk))

    assert "attempts 2 " in line
    assert "attempts: 2" in shown.splitlines()
    assert len([row for row in shown.splitlines() if row.startswith("  ")]) == 2


def test_deliveries_show_says_when_an_accepted_delivery_is_due_again(receiver):
    delivery = _sent_lost_and_looked_up(receiver)

    shown = run("deliveries", "show", str(delivery.pk))
    as_json = json.loads(run("deliveries", "show", str(delivery.pk), "--json"))

    assert f"next attempt: {timestamp(delivery.next_attempt_at)}" in shown.splitlines()
    assert as_json["next_attempt_at"] == timestamp(delivery.next_attempt_at)
