"""Health probes for load balancers and orchestrators (SPEC 12).

`/healthz` says the process answers; it touches nothing. `/readyz` says this process can
serve posts: the database answers and every migration this code knows is applied. The
broker is reported but does not decide readiness, because posting does not need it (only
maintenance jobs do), and it never holds a probe: a broker that accepts a connection and
then says nothing would otherwise keep the worker answering /readyz until gunicorn killed
it, and a load balancer probes often. Both are answered by
board.serving.middleware.ProbeMiddleware before host validation, since a load balancer
probes by address; they read no Host, build no URL, need no token and write nothing.
"""

import logging
import os
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as NoAnswerYet
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse

log = logging.getLogger(__name__)

# How long a probe waits for the broker's answer before it says `degraded: ["broker"]`:
# a broker that answers at all answers well within it, and /readyz stays under a second.
BROKER_DEADLINE_SECONDS = 0.5
# How long the check itself, apart from the probe, waits to connect and for each answer.
BROKER_TIMEOUT_SECONDS = 2

# Applied migrations are not un-applied under a running process, so once seen complete
# this process stops asking (the check loads every migration file).
_migrations_complete = False


@dataclass
class Readiness:
    failing: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not self.failing

    def body(self) -> dict:
        body: dict = {"status": "ready" if self.ready else "unavailable"}
        if self.failing:
            body["failing"] = self.failing
        if self.degraded:
            body["degraded"] = self.degraded
        return body


def database_answers() -> bool:
    try:
        # Readiness asks about the database now: a kept connection that broke since its
        # last use (board/serving/postgresql probes only after idling) is replaced first, not
        # reported as a database that is down.
        # Then Django's own probe (`SELECT 1` on PostgreSQL) on the connection it made.
        connection.health_check_done = False
        connection.close_if_health_check_failed()
        connection.ensure_connection()
        if not connection.is_usable():
            raise DatabaseError("the database did not answer its probe")
    except DatabaseError as error:
        log.warning("readiness: database failed with %s", type(error).__name__)
        return False
    return True


def migrations_applied() -> bool:
    global _migrations_complete
    if _migrations_complete:
        return True
    from django.db.migrations.executor import MigrationExecutor

    try:
        # Reads django_migrations and the migration files; never creates the table.
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as error:
        log.warning("readiness: migration check failed with %s", type(error).__name__)
        return False
    _migrations_complete = not plan
    return _migrations_complete


def broker_answers() -> bool:
    """Whether the broker answered within BROKER_DEADLINE_SECONDS. Before any check has
    finished, and while one hangs, it has not: the first probe says `degraded` unless
    the broker answers it in time."""
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        # The embedded broker is two folders: it answers when both can be written.
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        folders = {options["data_folder_in"], options["data_folder_out"], options["control_folder"]}
        return all(os.path.isdir(folder) and os.access(folder, os.W_OK) for folder in folders)
    try:
        return _broker_check.latest().result(timeout=BROKER_DEADLINE_SECONDS)
    except NoAnswerYet:
        log.warning("readiness: broker did not answer within %ss", BROKER_DEADLINE_SECONDS)
        return False


class BrokerCheck:
    """At most one broker check at a time in a process, in a thread of its own: probes
    that arrive while one runs wait on it rather than start another, so a hung broker
    costs a worker one thread, not one per probe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: Future | None = None

    def latest(self) -> Future:
        with self._lock:
            if self._running is None or self._running.done():
                self._running = Future()
                threading.Thread(target=self._check, args=(self._running,), daemon=True,
                                 name="settle-readiness-broker").start()
            return self._running

    @staticmethod
    def _check(outcome: Future) -> None:
        from board.celery import app

        try:
            with app.connection_for_write(connect_timeout=BROKER_TIMEOUT_SECONDS,
                                          transport_options=_bounded_waits()) as broker:
                broker.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_SECONDS)
        except Exception as error:  # kombu raises the transport's own errors: any is "down"
            log.warning("readiness: broker failed with %s", type(error).__name__)
            outcome.set_result(False)
        else:
            outcome.set_result(True)


def _bounded_waits() -> dict:
    """The transport's own bounds on every wait after connecting, so a check thread on a
    broker that accepted and fell silent ends too (py-amqp's handshake is bounded by the
    connect timeout already; redis-py waits forever on a reply by default)."""
    scheme = settings.CELERY_BROKER_URL.partition("://")[0]
    if scheme.startswith("redis") or scheme.startswith("rediss"):
        return {"socket_timeout": BROKER_TIMEOUT_SECONDS,
                "socket_connect_timeout": BROKER_TIMEOUT_SECONDS}
    if scheme.startswith("amqp") or scheme.startswith("pyamqp"):
        return {"read_timeout": BROKER_TIMEOUT_SECONDS, "write_timeout": BROKER_TIMEOUT_SECONDS}
    return {}


def _load_broker_transport() -> None:
    """Imports the broker's transport (redis-py: about a second on a busy host) while the
    process starts, so that a probe's check costs only the conversation with the broker
    and the first probe of a worker meets the deadline when the broker answers."""
    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        from board.celery import app

        app.connection_for_write().get_transport_cls()


_broker_check = BrokerCheck()
_load_broker_transport()


def readiness() -> Readiness:
    result = Readiness()
    if not database_answers():
        result.failing.append("database")
    elif not migrations_applied():
        result.failing.append("migrations")
    if not broker_answers():
        result.degraded.append("broker")
    return result


def healthz(request: HttpRequest) -> JsonResponse:
    return _no_store(JsonResponse({"status": "ok"}))


def readyz(request: HttpRequest) -> JsonResponse:
    result = readiness()
    return _no_store(JsonResponse(result.body(), status=200 if result.ready else 503))


def _no_store(response: JsonResponse) -> JsonResponse:
    response["Cache-Control"] = "no-store"
    return response
