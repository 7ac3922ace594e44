"""URLs are checked when an endpoint is added or changed, and the private-address
allowance covers one host (SPEC 9)."""

import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from maintenance.deliveries import endpoints, sweep, webhooks
from maintenance.deliveries.models import DeliveryAttempt, Endpoint
from maintenance.exceptions import DeliveryRefused
from moderation.models import AuditEvent
from tests.celery_worker import ROOT, test_database_url
from tests.maintenance.conftest import delivery_of, drive, post_entry
from tests.maintenance.webhook_receiver import Listener

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def run(*args) -> str:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue() + err.getvalue()


UNSENDABLE = [
    ("https://hooks.example/a b", "space"),
    ("https://hooks.example/a\tb", "space"),
    ("https://hooks.example/a\x01b", "control character"),
    ("https://hooks.example/a\x7fb", "control character"),
    ("https://hooks.example/caf\u00e9", "ASCII outside its host"),
    ("https://hooks.example/x?q=\u2603", "ASCII outside its host"),
    ("https://hooks.example/x#frag", "fragment"),
    ("https://hooks.example/x#", "fragment"),
    ("https://user@hooks.example/x", "user name"),
    ("https://:pw@hooks.example/x", "user name"),
    ("//hooks.example/x", "absolute"),
    ("hooks.example/x", "absolute"),
    ("https:///x", "absolute"),
    ("https://hooks.example:99999/x", "not a valid URL"),
    ("https://hooks.example/" + "x" * 1980, "longer than 2000"),
    ("http://hooks.example/x", "must use https"),
    ("https://b\u00fc..x.example/x", "not a valid name"),
]


@pytest.mark.parametrize(("url", "problem"), UNSENDABLE)
def test_endpoint_add_refuses_what_cannot_be_sent(url, problem):
    with pytest.raises(CommandError, match=problem):
        run("endpoint", "add", "bad", url)
    assert Endpoint.objects.count() == 0 and AuditEvent.objects.count() == 0


@pytest.mark.parametrize(("url", "problem"), UNSENDABLE)
def test_endpoint_set_url_refuses_what_cannot_be_sent(url, problem):
    run("endpoint", "add", "hooks", "https://hooks.example/in")

    with pytest.raises(CommandError, match=problem):
        run("endpoint", "set-url", "hooks", url)

    assert Endpoint.objects.get().url == "https://hooks.example/in"
    assert not AuditEvent.objects.filter(action="endpoint_set_url").exists()


def test_a_non_ascii_host_is_stored_idna_encoded():
    run("endpoint", "add", "idn", "https://b\u00fccher.example:8443/in?x=1")

    assert Endpoint.objects.get().url == "https://xn--bcher-kva.example:8443/in?x=1"


def test_a_refusal_is_one_line_on_stderr_and_a_non_zero_exit():
    environment = {**os.environ, "DATABASE_URL": test_database_url(), "DEBUG": "true",
                   "SETTLE_PUBLIC_URL": "https://settle.example"}

    done = subprocess.run(
        [sys.executable, "manage.py", "endpoint", "add", "x", "https://hooks.example/a b"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )

    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "space" in done.stderr
    assert Endpoint.objects.count() == 0


def test_set_url_changes_the_url_and_is_audited():
    run("endpoint", "add", "hooks", "https://hooks.example/in")

    run("endpoint", "set-url", "hooks", "https://other.example/new?token=t")

    assert Endpoint.objects.get().url == "https://other.example/new?token=t"
    event = AuditEvent.objects.get(action="endpoint_set_url")
    assert event.details["url"] == "https://other.example"  # never the path or query


def test_a_stored_url_that_cannot_be_sent_is_refused_before_connecting():
    # A URL stored before these checks existed: the attempt is refused, never a crash.
    answer = webhooks.request(
        method="POST", url="http://127.0.0.1:9/caf\u00e9 x", headers={}, body=b"",
        timeout=1, allow_private=True,
    )
    assert (answer.error, answer.request_left) == ("bad_url", False)


# --- The allowance covers one host ------------------------------------------------------


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def test_a_lookup_url_on_another_host_is_vetted_as_without_the_allowance(listener):
    # given: the allowance for 127.0.0.1, a lookup URL on the metadata address
    run(
        "endpoint", "add", "x", f"http://127.0.0.1:{listener.port}/hook",
        "--supports", "lookup", "--lookup-url", "http://169.254.169.254/latest/{delivery_id}",
        "--allow-private", "--reason", "receiver runs on this host",
    )
    endpoint = Endpoint.objects.get()
    # the send leaves (the listener closes at once, no answer): a lookup is due
    delivery = delivery_of(post_entry(), endpoint)
    sweep.delivery_run(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.lookup_due and listener.accepted == 1

    # when: the lookups run
    delivery = drive(delivery, seconds=3)

    # then: every lookup was refused by the address rule, none connected
    lookups = DeliveryAttempt.objects.filter(delivery=delivery, kind="lookup")
    assert lookups.exists()
    assert {(a.error, a.request_left) for a in lookups} == {("address_refused", False)}


def test_send_test_vets_a_lookup_url_on_another_host(listener):
    endpoints.endpoint_add(
        name="x", url=f"http://127.0.0.1:{listener.port}/hook", supports="lookup",
        lookup_url="http://169.254.169.254/latest/{delivery_id}", allow_private=True,
        private_reason="receiver runs on this host",
    )

    result = endpoints.endpoint_send_test(name="x")

    assert result.lookup_error == "address_refused"
    assert listener.accepted == 1  # the send itself, to the allowed host


def test_the_allowance_covers_its_host_whatever_the_port(listener):
    endpoints.endpoint_add(
        name="x", url="http://127.0.0.1:1/hook", supports="lookup",
        lookup_url=f"http://127.0.0.1:{listener.port}/l/{{delivery_id}}", allow_private=True,
        private_reason="receiver runs on this host",
    )

    result = endpoints.endpoint_send_test(name="x")

    assert result.lookup_error != "address_refused" and listener.accepted == 1


def test_the_audit_event_names_the_allowed_host():
    run("endpoint", "add", "x", "http://127.0.0.1:8230/hook", "--allow-private",
        "--reason", "receiver runs on this host")

    event = AuditEvent.objects.get(action="endpoint_add")
    assert event.details["allow_private_host"] == "127.0.0.1"
    assert event.reason == "receiver runs on this host"


def test_set_url_to_another_host_withdraws_the_allowance():
    run("endpoint", "add", "x", "https://127.0.0.1:8230/hook", "--allow-private",
        "--reason", "receiver runs on this host")

    output = run("endpoint", "set-url", "x", "https://10.0.0.7/hook")

    endpoint = Endpoint.objects.get()
    assert not endpoint.allow_private and endpoint.private_reason == ""
    assert "withdrawn" in output
    event = AuditEvent.objects.get(action="endpoint_set_url")
    assert event.details["allowance_withdrawn"] is True


def test_set_url_to_another_host_over_http_without_the_allowance_is_refused():
    run("endpoint", "add", "x", "http://127.0.0.1:8230/hook", "--allow-private",
        "--reason", "receiver runs on this host")

    with pytest.raises(CommandError, match="must use https"):
        run("endpoint", "set-url", "x", "http://10.0.0.7/hook")

    endpoint = Endpoint.objects.get()
    assert endpoint.allow_private and endpoint.url == "http://127.0.0.1:8230/hook"


def test_set_url_to_another_host_keeps_the_allowance_when_given_again():
    run("endpoint", "add", "x", "http://127.0.0.1:8230/hook", "--allow-private",
        "--reason", "receiver runs on this host")

    run("endpoint", "set-url", "x", "http://10.0.0.7/hook", "--allow-private",
        "--reason", "moved to the LAN box")

    endpoint = Endpoint.objects.get()
    assert endpoint.allow_private and endpoint.private_reason == "moved to the LAN box"
    event = AuditEvent.objects.get(action="endpoint_set_url")
    assert event.details["allow_private_host"] == "10.0.0.7"


def test_set_url_on_the_same_host_keeps_the_allowance():
    run("endpoint", "add", "x", "http://127.0.0.1:8230/hook", "--allow-private",
        "--reason", "receiver runs on this host")

    run("endpoint", "set-url", "x", "http://127.0.0.1:9000/other")

    assert Endpoint.objects.get().allow_private


def test_a_refused_set_url_changes_nothing():
    with pytest.raises(DeliveryRefused, match="no endpoint"):
        endpoints.endpoint_set_url(name="nobody", url="https://hooks.example/x")


def test_set_url_can_change_the_lookup_url_too():
    run("endpoint", "add", "x", "https://hooks.example/in", "--supports", "lookup",
        "--lookup-url", "https://hooks.example/l/{delivery_id}")

    run("endpoint", "set-url", "x", "https://new.example/in",
        "--lookup-url", "https://new.example/find?id={delivery_id}")

    endpoint = Endpoint.objects.get()
    assert (endpoint.url, endpoint.lookup_url) == (
        "https://new.example/in", "https://new.example/find?id={delivery_id}"
    )


def test_set_url_refuses_a_lookup_url_for_an_endpoint_without_lookup():
    run("endpoint", "add", "x", "https://hooks.example/in")

    with pytest.raises(CommandError, match="only for an endpoint that supports lookup"):
        run("endpoint", "set-url", "x", "https://new.example/in",
            "--lookup-url", "https://new.example/l/{delivery_id}")

    assert Endpoint.objects.get().url == "https://hooks.example/in"
