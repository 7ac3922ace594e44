"""Three web instances (as on three hosts) over one PostgreSQL and one broker, with a
Celery worker and one beat, run from deploy/Procfile's own commands (SPEC 12).

The same storm of posts goes to all three at once: every identity is sent to each
instance, in shuffled order, from many threads. Exactly one entry per identity must come
out, and beat's thread purge must run and be recorded while the storm goes on. The same
run happens with Redis and with RabbitMQ as the broker.
"""

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager

import pytest
from django.conf import settings
from django.db import connection

from board.models import Entry
from maintenance.models import MaintenanceRun
from receipts.models import Receipt, Tombstone
from tests.celery_worker import test_database_url
from tests.e2e.conftest import free_port
from tests.e2e.processes import (
    Identity,
    answers,
    environment,
    new_question,
    post,
    post_expired_thread,
    procfile,
    rabbitmq_vhost,
    started,
    wait_for_log,
    wait_until,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

INSTANCES = 3
IDENTITIES = 40
STORM_THREADS = 24


@contextmanager
def redis_broker():
    configured = settings.CELERY_BROKER_URL
    yield configured if configured.startswith("redis://") else "redis://127.0.0.1:6379/0"


BROKERS = {"redis": redis_broker, "rabbitmq": rabbitmq_vhost}


def settle(instances: list[str], identity: Identity, first: int) -> None:
    """Send one identity to every instance, then retry it (same id, same content) until
    settled, as a client must when an answer says in_progress or unavailable."""
    for turn in range(len(instances)):
        identity.answers.append(post(instances[(first + turn) % len(instances)], identity.payload))
    for attempt in range(20):
        last = identity.answers[-1]
        if last.status in (200, 201) or last.code not in ("in_progress", "unavailable", None):
            return
        time.sleep(0.2)
        identity.answers.append(post(instances[attempt % len(instances)], identity.payload))


def purge_recorded() -> MaintenanceRun | None:
    return MaintenanceRun.objects.filter(
        job="purge-expired-threads", counts__threads__gte=1
    ).first()


def watch(purged: threading.Event) -> None:
    try:
        if wait_until(purge_recorded, seconds=90):
            purged.set()
    finally:
        connection.close()  # this thread's own connection, or the test database stays busy


@pytest.mark.parametrize("broker", BROKERS)
def test_it_saves_one_entry_per_identity_across_instances_while_beat_purges(broker, tmp_path):
    # given: a thread that expired long ago, and the Procfile's processes three web times
    post_expired_thread()
    commands = procfile()

    with ExitStack() as stack:
        broker_url = stack.enter_context(BROKERS[broker]())
        env = environment(
            DATABASE_URL=test_database_url(),
            CELERY_BROKER_URL=broker_url,
            WEB_CONCURRENCY="2",
            SETTLE_TEST_BEAT_SECONDS="1",
        )
        instances, webs = [], []
        for number in range(INSTANCES):
            port = free_port()
            web_env = {**env, "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{port}"}
            webs.append(stack.enter_context(
                started(f"web{number}", commands["web"], web_env, tmp_path)
            ))
            instances.append(f"http://127.0.0.1:{port}")
        worker = stack.enter_context(started("worker", commands["worker"], env, tmp_path))
        # The Procfile's beat keeps its schedule under var/; this test keeps its own.
        beat_command = commands["beat"].replace(
            "var/celerybeat-schedule", str(tmp_path / "beat-schedule")
        )
        beat = stack.enter_context(started("beat", beat_command, env, tmp_path))
        up = wait_until(lambda: all(answers(base) for base in instances), seconds=60)
        assert up, "\n".join(web.tail() for web in webs)
        wait_for_log(worker, "ready.")

        # when: the storm, and more of it until the purge has been recorded under it
        storm = [Identity(new_question(broker)) for _ in range(IDENTITIES)]
        purged = threading.Event()
        watcher = threading.Thread(target=watch, args=(purged,), daemon=True)
        watcher.start()
        with ThreadPoolExecutor(max_workers=STORM_THREADS) as pool:
            order = list(range(len(storm)))
            random.shuffle(order)
            list(pool.map(lambda i: settle(instances, storm[i], i), order))
            while not purged.is_set() and watcher.is_alive():
                more = [Identity(new_question(broker)) for _ in range(STORM_THREADS)]
                list(pool.map(lambda pair: settle(instances, pair[1], pair[0]),
                              enumerate(more)))
                storm += more
        watcher.join()
        alive = {p.name: p.process.poll() is None for p in [*webs, worker, beat]}

    # then: one entry per identity, whichever instance answered
    assert purged.is_set(), worker.tail() + beat.tail()
    assert all(alive.values()), alive
    for identity in storm:
        statuses = [answer.status for answer in identity.answers]
        assert identity.settled is not None, (identity.request_id, identity.answers)
        assert statuses.count(201) == 1, (identity.request_id, statuses)
        assert 500 not in statuses and None not in statuses, statuses
        ids = {a.body["id"] for a in identity.answers if a.status in (200, 201)}
        assert len(ids) == 1
        assert Entry.objects.filter(body__contains=identity.request_id).count() == 1
        assert Receipt.objects.filter(request_id=identity.request_id).count() == 1
    # and: beat's purge ran on the shared broker, was recorded, and left a tombstone
    run = purge_recorded()
    assert run.error == "" and run.counts["threads"] == 1
    assert Tombstone.objects.count() == 1
    assert Entry.objects.count() == len(storm)
