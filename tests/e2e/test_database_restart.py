"""PostgreSQL restarted (`pg_ctl restart -m immediate`, a crash and recovery) under a
stream of posts from several client threads, on a cluster this test owns (SPEC 5.1, 11, 12).

While the database is down every answer is `503 unavailable` with a truthful `outcome`,
never a 500, never a hang; once it is back every client retries with the same request_id
and content until settled; then every acknowledged post exists exactly once, and the
gunicorn workers that served through it are the same processes.

With SETTLE_TEST_PGBOUNCER=1 (.ci/run's PgBouncer leg) the service reaches the cluster
through a PgBouncer of its own in transaction mode, from deploy/pgbouncer/pgbouncer.ini.
"""

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from board.posting.limits import OVERALL_SOURCE
from tests.e2e.conftest import free_port
from tests.e2e.processes import (
    BIN,
    ROOT,
    Identity,
    answers,
    environment,
    new_question,
    post,
    procfile,
    started,
    wait_until,
)

pytestmark = pytest.mark.postgres

CLIENTS = 6
# A request may not take longer than this, down or not: connect_timeout is 5 s.
REQUEST_BOUND_SECONDS = 15
SETTLED_AFTER_RESTART = 3


def postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        found = [Path(p) for p in [shutil.which("pg_ctl")] if p]
    if not found:
        pytest.fail("pg_ctl not found (apt-get install postgresql)")
    return found[-1].parent


def as_postgres(*command: str) -> subprocess.CompletedProcess:
    # PostgreSQL refuses to run as root; the cluster belongs to the postgres OS user.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, check=True)


class Cluster:
    """A throw-away PostgreSQL cluster on a free port, in a folder of its own."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="settle-pg-"))
        self.data = self.folder / "data"
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/settle"

    def pg_ctl(self, *args: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} "
            # No fsync: the machine does not crash here, only the server does, and what
            # PostgreSQL wrote before its crash is in the OS cache. Commits stay synchronous.
            "-c fsync=off -c full_page_writes=off"
        )
        as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60",
                    "-l", str(self.folder / "server.log"), "-o", options, *args)

    def create(self) -> None:
        as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                    "-A", "trust", "-E", "UTF8", "--no-sync")
        self.pg_ctl("start")
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute("CREATE DATABASE settle")

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        try:
            self.pg_ctl("stop", "-m", "immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def own_cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    try:
        cluster.create()
        yield cluster
    finally:
        cluster.remove()


PGBOUNCER = Path("/usr/sbin/pgbouncer")


@contextmanager
def pgbouncer_before(cluster: Cluster) -> Iterator[str]:
    """The shipped PgBouncer configuration in front of `cluster`; yields the service's URL."""
    if not PGBOUNCER.exists():
        pytest.fail("pgbouncer not found (apt-get install pgbouncer)")
    port = free_port()
    rewritten = {
        "listen_port": str(port),
        "logfile": str(cluster.folder / "pgbouncer.log"),
        "pidfile": str(cluster.folder / "pgbouncer.pid"),
        "auth_file": str(ROOT / "deploy" / "pgbouncer" / "userlist.txt"),
    }
    lines = []
    for line in (ROOT / "deploy" / "pgbouncer" / "pgbouncer.ini").read_text().splitlines():
        name = line.split("=", 1)[0].strip()
        if name == "*":
            line = f"* = host=127.0.0.1 port={cluster.port}"
        elif name in rewritten:
            line = f"{name} = {rewritten[name]}"
        lines.append(line)
    config = cluster.folder / "pgbouncer.ini"
    config.write_text("\n".join(lines) + "\n")
    user = ["-u", "postgres"] if os.geteuid() == 0 else []
    subprocess.run([str(PGBOUNCER), "-d", *user, str(config)], check=True)
    try:
        assert wait_until(lambda: _answers_sql(port), seconds=30)
        yield f"postgres://postgres@127.0.0.1:{port}/settle"
    finally:
        pid = (cluster.folder / "pgbouncer.pid").read_text().strip()
        os.kill(int(pid), 15)


def _answers_sql(port: int) -> bool:
    try:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/settle",
                             connect_timeout=2) as connection:
            connection.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


@contextmanager
def service_url(cluster: Cluster) -> Iterator[str]:
    if os.environ.get("SETTLE_TEST_PGBOUNCER") == "1":
        with pgbouncer_before(cluster) as url:
            yield url
    else:
        yield cluster.url


@contextmanager
def posts_in_flight(cluster: Cluster) -> Iterator[None]:
    """New posts held in the middle of their admission while the body runs: the overall
    counter's row is locked from a connection of the test's own, and the body starts
    once a post waits on it. Without it a restart between two statements can go unseen,
    above all through PgBouncer, which holds a query until the server is back."""
    holder = psycopg.connect(cluster.admin_url("settle"))
    try:
        assert wait_until(lambda: _posts_waiting(holder), seconds=30)
        yield
    finally:
        try:
            holder.close()
        except psycopg.Error:
            pass  # the restart broke it


def _posts_waiting(holder: psycopg.Connection) -> bool:
    # Locked again on every look: a new hour's row appears with the hour's first post.
    holder.execute(
        "SELECT 1 FROM board_hourlycounter WHERE source = %s FOR UPDATE", [OVERALL_SOURCE]
    )
    return holder.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'"
    ).fetchone()[0] > 0


def worker_pids(master: int) -> set[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)],
                         capture_output=True, text=True).stdout
    return {int(pid) for pid in out.split()}


def keep_posting(base: str, stop: threading.Event, done: list[Identity]) -> None:
    """One client: post, and retry the same identity until it settles; then the next."""
    while not stop.is_set():
        identity = Identity(new_question("restart"))
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            identity.answers.append(post(base, identity.payload, timeout=30))
            if identity.settled:
                break
            time.sleep(0.1)
        done.append(identity)


def test_it_answers_503_while_postgres_restarts_and_every_post_lands_once(tmp_path):
    with own_cluster() as cluster, service_url(cluster) as url:
        env = environment(DATABASE_URL=url, WEB_CONCURRENCY="3")
        subprocess.run([str(BIN / "python"), "manage.py", "migrate", "--noinput", "-v", "0"],
                       cwd=ROOT, env=env, check=True)
        port = free_port()
        web_env = {**env, "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{port}"}
        base = f"http://127.0.0.1:{port}"
        with started("web", procfile()["web"], web_env, tmp_path) as web:
            assert wait_until(lambda: answers(base), seconds=60), web.tail()
            workers_before = worker_pids(web.process.pid)

            # given: several clients posting steadily
            stop = threading.Event()
            done: list[Identity] = []
            clients = [threading.Thread(target=keep_posting, args=(base, stop, done))
                       for _ in range(CLIENTS)]
            for client in clients:
                client.start()
            assert wait_until(lambda: len(done) >= 2 * CLIENTS, seconds=60)

            # when: PostgreSQL crashes and comes back, as `restart -m immediate` does it,
            # with posts in the middle of their statements
            with posts_in_flight(cluster):
                cluster.pg_ctl("restart", "-m", "immediate")
            back = len(done)
            settled_after = wait_until(
                lambda: len(done) >= back + SETTLED_AFTER_RESTART * CLIENTS, seconds=120
            )
            stop.set()
            for client in clients:
                client.join(timeout=120)
            workers_after = worker_pids(web.process.pid)
            serving = web.process.poll() is None

        # then: every answer was a success or a truthful 503, in bounded time
        every = [answer for identity in done for answer in identity.answers]
        failures = [a for a in every if a.status not in (200, 201)]
        assert settled_after, web.tail()
        assert failures, "no request met the restart: the test proved nothing"
        for answer in failures:
            assert answer.status == 503, (answer.status, answer.body)
            assert answer.code == "unavailable"
            assert answer.outcome in ("not_committed", "unknown")
        assert max(answer.seconds for answer in every) < REQUEST_BOUND_SECONDS
        # and: `not_committed` was true: the next success created the entry, unless an
        # earlier answer admitted it could not tell
        for identity in done:
            assert identity.settled is not None, identity.answers
            first_success = next(a for a in identity.answers if a.status in (200, 201))
            before = identity.answers[: identity.answers.index(first_success)]
            if first_success.status == 200:
                assert any(a.outcome == "unknown" for a in before), identity.answers
        # and: every acknowledged post exists exactly once, under the id it was given
        with psycopg.connect(cluster.admin_url("settle")) as connection:
            for identity in done:
                rows = connection.execute(
                    "SELECT id FROM board_entry WHERE body = %s", [identity.payload["body"]]
                ).fetchall()
                receipts = connection.execute(
                    "SELECT count(*) FROM receipts_receipt WHERE request_id = %s",
                    [identity.request_id],
                ).fetchone()[0]
                assert [row[0] for row in rows] == [identity.settled.body["id"]]
                assert receipts == 1
        # and: the same gunicorn workers served before and after: none had to restart
        assert serving
        assert workers_after == workers_before
