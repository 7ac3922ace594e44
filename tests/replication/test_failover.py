"""Failover (SPEC 12.1): a standby promoted while agents post loses no acknowledged post.

A private primary with a synchronous standby (`synchronous_standby_names` naming it, so a
commit returns only once the standby has it), Settle's gunicorn on libpq's multi-host URL
with `target_session_attrs=read-write`. Agents post and retry each request with its id
until it settles; the primary is stopped at once (`pg_ctl stop -m immediate`, a crash),
and the standby promoted (`pg_ctl promote`). Every web process finds the new primary
without a restart, answering 503 meanwhile, and every request settles to one entry.
"""

import datetime
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import clusters
from tests.e2e.conftest import ROOT, gunicorn_serving
from tests.e2e.processes import Identity, new_question, post
from tests.replication.test_replicas import manage

pytestmark = [
    pytest.mark.replication,
    pytest.mark.skipif(clusters.missing() is not None, reason=str(clusters.missing())),
]

AGENTS = 4
REQUESTS = 60


def settle(base: str, identity: Identity, deadline: float) -> None:
    """Post until the request settles (201 or 200), always with its id and content."""
    while time.monotonic() < deadline:
        answer = post(base, identity.payload, timeout=20)
        identity.answers.append(answer)
        if answer.status in (200, 201):
            return
        time.sleep(0.2)


@contextmanager
def celery_with_beat(database_url: str, folder: Path):
    """A worker running beat, every job each second, on the embedded broker."""
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "true",
           "SECRET_KEY": "failover-test", "SETTLE_BROKER_DIR": str(folder / "broker"),
           "SETTLE_TEST_BEAT_SECONDS": "1"}
    env.pop("CELERY_BROKER_URL", None)
    log = folder / "celery.log"
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("celery")), "-A", "board", "worker", "-B",
         "--concurrency", "1", "--loglevel", "INFO", "--schedule", str(folder / "beat")],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield log
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def jobs_recorded_since(cluster: clusters.Cluster, moment: datetime.datetime) -> int:
    (count,), = cluster.sql(
        "SELECT count(*) FROM maintenance_maintenancerun WHERE started_at > %s AND error = ''",
        (moment,),
    )
    return count


def test_a_promotion_while_agents_post_loses_no_acknowledged_post_and_makes_no_duplicate(
    tmp_path,
):
    with clusters.primary() as primary:
        manage(primary.url(), "migrate", "--noinput")
        with clusters.standby(primary) as standby:
            primary.configure(synchronous_standby_names="settle_standby",
                              synchronous_commit="on")
            url = (f"postgres://postgres@127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
                   "/settle?target_session_attrs=read-write&connect_timeout=2")
            with gunicorn_serving(
                tmp_path / "gunicorn.log", url, SETTLE_SOURCE_HOURLY_LIMIT="100000",
                SETTLE_OVERALL_HOURLY_LIMIT="100000",
            ) as port, celery_with_beat(url, tmp_path) as celery_log:
                base = f"http://127.0.0.1:{port}"
                identities = [Identity(new_question("failover")) for _ in range(REQUESTS)]
                work: queue.Queue[Identity] = queue.Queue()
                for identity in identities:
                    work.put(identity)
                deadline = time.monotonic() + 120

                def agent() -> None:
                    while True:
                        try:
                            identity = work.get_nowait()
                        except queue.Empty:
                            return
                        settle(base, identity, deadline)
                        time.sleep(0.05)

                # given: agents posting through the primary
                agents = [threading.Thread(target=agent) for _ in range(AGENTS)]
                for thread in agents:
                    thread.start()
                while sum(1 for i in identities if i.settled) < REQUESTS // 4:
                    time.sleep(0.05)

                # when: the primary crashes and the standby is promoted
                primary.stop("immediate")
                acknowledged_before = [i for i in identities if i.settled]
                time.sleep(1)
                standby.promote()
                promoted_at = datetime.datetime.now(datetime.UTC)
                for thread in agents:
                    thread.join()
                # and Celery's jobs run again, on the new primary, without a restart
                deadline = time.monotonic() + 60
                while (jobs_recorded_since(standby, promoted_at) == 0
                       and time.monotonic() < deadline):
                    time.sleep(0.5)
                assert jobs_recorded_since(standby, promoted_at) > 0, celery_log.read_text()[-3000:]

            # then: every request settled, through 503s only, to exactly one entry
            unavailable = sum(a.status == 503 for i in identities for a in i.answers)
            print(f"failover: {len(acknowledged_before)} posts acknowledged before the crash,"
                  f" {unavailable} answers 503 during the switch, all {REQUESTS} settled")
            statuses = {answer.status for i in identities for answer in i.answers}
            assert statuses <= {200, 201, 503}, statuses
            assert 503 in statuses  # the switch was seen, and answered honestly
            assert all(i.settled for i in identities)
            rows = standby.sql(
                "SELECT substring(body from 'identity ([0-9a-f-]+)'), count(*)"
                " FROM board_entry WHERE body LIKE 'identity %%failover' GROUP BY 1"
            )
            counts = dict(rows)
            assert all(counts.get(i.request_id) == 1 for i in identities)
            assert len(counts) == REQUESTS
            assert all(counts.get(i.request_id) == 1 for i in acknowledged_before)
