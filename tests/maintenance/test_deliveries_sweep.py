"""The minute sweep: ended leases ("sent, no answer"), deadlines, endpoints without
success, due work; retention of settled deliveries; and a real worker killed with
SIGKILL mid-request."""

import os
import signal
import subprocess
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from maintenance.deliveries import actions, attempts, endpoints, sweep
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint
from maintenance.deliveries.purge import purge_deliveries
from maintenance.models import MaintenanceRun
from maintenance.purges import job_run
from tests.celery_worker import (
    CELERY,
    ROOT,
    WORKER_SETTINGS,
    celery_worker,
    test_database_url,
    wait_for,
)
from tests.maintenance.conftest import (
    PUBLIC_URL,
    broker_purge,
    delivery_of,
    drive,
    endpoint_for,
    post_entry,
)
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def claimed_and_abandoned(delivery: Delivery) -> Delivery:
    """What a worker that dies right after its claim leaves: running, attempt row written,
    a lease that ends one second (the margin) later."""
    claim = attempts.attempt_claim(delivery, kind="send", timeout=timedelta(0), count=True)
    assert claim is not None
    time.sleep(1.2)
    return Delivery.objects.get(pk=delivery.pk)


@pytest.mark.parametrize(
    ("supports", "state", "lookup_due"),
    [("none", "outcome_unknown", False), ("dedupe", "accepted", False),
     ("lookup", "accepted", True)],
)
def test_an_ended_lease_is_sent_with_no_answer(receiver, supports, state, lookup_due):
    endpoint_for(receiver, supports=supports)
    delivery = claimed_and_abandoned(delivery_of(post_entry()))
    assert delivery.state == "running"

    counts = sweep.deliveries_sweep()

    delivery.refresh_from_db()
    assert counts["leases_ended"] == 1
    assert (delivery.state, delivery.unanswered, delivery.lookup_due) == (
        state, True, lookup_due
    )
    [attempt] = DeliveryAttempt.objects.filter(delivery=delivery)
    assert attempt.error == "lease_ended" and attempt.request_left is True


def test_an_ended_lease_after_a_cancel_request_is_unknown(receiver):
    endpoint_for(receiver, supports="dedupe")
    delivery = delivery_of(post_entry())
    attempts.attempt_claim(delivery, kind="send", timeout=timedelta(0), count=True)
    actions.delivery_cancel(delivery_id=delivery.pk)
    time.sleep(1.2)

    sweep.deliveries_sweep()

    delivery.refresh_from_db()
    assert delivery.state == "outcome_unknown"


def test_past_its_deadline_a_delivery_fails_or_is_unknown(receiver):
    endpoint = endpoint_for(receiver, supports="dedupe")
    quiet, lost = delivery_of(post_entry()), delivery_of(post_entry())
    endpoints.endpoint_disable(name=endpoint.name)  # both wait, unsent
    Delivery.objects.filter(pk=lost.pk).update(unanswered=True)
    Delivery.objects.update(deadline_at=timezone.now())

    counts = sweep.deliveries_sweep()

    assert counts["expired"] == 2
    assert Delivery.objects.get(pk=quiet.pk).state == "failed"
    assert Delivery.objects.get(pk=lost.pk).state == "outcome_unknown"
    assert receiver.seen == []


def test_an_endpoint_without_success_for_the_period_is_disabled_and_the_run_recorded(
    receiver, settings
):
    settings.SETTLE_ENDPOINT_DISABLE_AFTER = timedelta(days=5)
    endpoint = endpoint_for(receiver)
    receiver.default = Behaviour(status=500)
    drive(delivery_of(post_entry()))
    endpoint.refresh_from_db()
    assert endpoint.failing_since is not None and endpoint.enabled
    assert sweep.sweep_job() == {
        "leases_ended": 0, "expired": 0, "endpoints_disabled": 0, "queued": 0
    }
    assert not MaintenanceRun.objects.filter(job="deliveries-sweep").exists()

    # when: its first failure after the last success is more than five days old
    Endpoint.objects.filter(pk=endpoint.pk).update(
        failing_since=timezone.now() - timedelta(days=5, minutes=1)
    )
    sweep.sweep_job()

    endpoint.refresh_from_db()
    assert endpoint.enabled is False and "5 days" in endpoint.disabled_reason
    run = MaintenanceRun.objects.get(job="deliveries-sweep")
    assert run.counts["endpoints_disabled"] == 1


def test_a_success_resets_the_failure_clock(receiver):
    endpoint = endpoint_for(receiver)
    receiver.script = [Behaviour(status=500)]

    drive(delivery_of(post_entry()))

    endpoint.refresh_from_db()
    assert endpoint.failing_since is None and endpoint.last_success_at is not None


def test_settled_deliveries_are_purged_after_retention_with_their_attempts(
    receiver, settings
):
    settings.SETTLE_DELIVERY_RETENTION = timedelta(days=30)
    endpoint_for(receiver, supports="none")
    old = drive(delivery_of(post_entry()))
    recent = drive(delivery_of(post_entry()))
    receiver.script = [Behaviour(hang=True)]
    unknown = drive(delivery_of(post_entry()))
    assert (old.state, recent.state, unknown.state) == (
        "succeeded", "succeeded", "outcome_unknown"
    )
    long_ago = timezone.now() - timedelta(days=31)
    Delivery.objects.filter(pk__in=[old.pk, unknown.pk]).update(
        created_at=long_ago, settled_at=long_ago
    )

    outcome = job_run(job="purge-deliveries", purge=purge_deliveries)

    assert outcome["counts"] == {"deliveries": 1, "delivery_attempts": 1}
    assert set(Delivery.objects.values_list("pk", flat=True)) == {recent.pk, unknown.pk}
    assert not DeliveryAttempt.objects.filter(delivery_id=old.pk).exists()
    run = MaintenanceRun.objects.get(job="purge-deliveries")
    assert run.counts == {"deliveries": 1, "delivery_attempts": 1}


def test_beat_sweeps_every_minute_and_purges_with_the_other_retention_jobs():
    schedule = django_settings.CELERY_BEAT_SCHEDULE
    assert schedule["deliveries-sweep"]["task"] == "maintenance.deliveries_sweep"
    assert schedule["deliveries-sweep"]["schedule"] == timedelta(minutes=1)
    assert schedule["purge-deliveries"]["task"] == "maintenance.purge_deliveries"


def test_a_worker_killed_mid_request_leaves_the_delivery_to_the_sweep(receiver, tmp_path):
    # given: a `none` endpoint that takes its time, and a real worker sending to it
    receiver.hang_seconds = 30
    receiver.default = Behaviour(hang=True)
    endpoint_for(receiver, supports="none")
    environment = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "SETTLE_BROKER_DIR": str(django_settings.BROKER_DIR),
        "DEBUG": "true",
        "SETTLE_PUBLIC_URL": PUBLIC_URL,
        "SETTLE_DELIVERY_TIMEOUT": "4s",
        "SETTLE_DELIVERY_LEASE_MARGIN": "1s",
        "SETTLE_DELIVERY_SCHEDULE": "0,0,0",
        "DJANGO_SETTINGS_MODULE": WORKER_SETTINGS,
    }
    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            [str(CELERY), "-A", "board", "worker", "--loglevel", "INFO", "--concurrency", "1"],
            cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        delivery = delivery_of(post_entry())  # the send task is queued on commit
        arrived = wait_for(lambda: receiver.posts(), seconds=90)
        assert arrived, log_path.read_text()[-3000:]
        # then: the intent was on record before the request left
        delivery.refresh_from_db()
        assert delivery.state == "running" and delivery.lease_expires_at is not None
        assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1

        # when: the worker dies mid-request
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()

    # the row stays running until its lease ends; then the sweep applies the rule
    sweep.deliveries_sweep()
    delivery.refresh_from_db()
    assert delivery.state == "running"
    lease_end = delivery.lease_expires_at
    time.sleep(max((lease_end - timezone.now()).total_seconds(), 0) + 0.5)
    counts = sweep.deliveries_sweep()

    delivery.refresh_from_db()
    assert counts["leases_ended"] == 1
    assert delivery.state == "outcome_unknown"
    assert list(
        Delivery.objects.filter(state="outcome_unknown").values_list("pk", flat=True)
    ) == [delivery.pk]  # it waits in the inbox
    assert len(receiver.posts()) == 1


def test_after_an_ended_lease_a_retry_due_within_a_minute_is_a_countdown(
    receiver, settings, tmp_path
):
    # given: a dedupe endpoint whose next attempt comes 2 s after one with no answer, and
    # a delivery whose worker died after its claim
    settings.SETTLE_DELIVERY_SCHEDULE = [timedelta(0), timedelta(seconds=2), timedelta(seconds=2)]
    endpoint_for(receiver, supports="dedupe")
    delivery = claimed_and_abandoned(delivery_of(post_entry()))
    broker_purge()  # the post's own send, which a worker would take for this retry

    # when: the sweep ends the lease, and a worker runs with no further sweep
    counts = sweep.deliveries_sweep()
    environment = {
        "SETTLE_BROKER_DIR": str(django_settings.BROKER_DIR),  # and keep the queue
        "SETTLE_PUBLIC_URL": PUBLIC_URL,
        "SETTLE_DELIVERY_SCHEDULE": "0,2s,2s",
    }
    with celery_worker(tmp_path, beat=False, env=environment) as log_path:
        arrived = wait_for(lambda: receiver.posts(), seconds=40)

        # then: the retry went by countdown, well before beat's next minute
        assert arrived, log_path.read_text()[-3000:]
    assert counts["leases_ended"] == 1
    assert wait_for(lambda: Delivery.objects.get(pk=delivery.pk).state == "succeeded", seconds=10)
