"""Health probes for load balancers and orchestrators (SPEC 12).

`/healthz` says the process answers; it touches nothing. `/readyz` says this process can
serve posts: the database answers and every migration this code knows is applied. The
broker is reported but does not decide readiness, because posting does not need it (only
maintenance jobs do). Both are answered by board.serving.middleware.ProbeMiddleware before host
validation, since a load balancer probes by address; they read no Host, build no URL,
need no token and write nothing.
"""

import logging
import os
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse

log = logging.getLogger(__name__)

# How long the broker may take to answer before it counts as down.
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
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        # The embedded broker is two folders: it answers when both can be written.
        options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        folders = {options["data_folder_in"], options["data_folder_out"], options["control_folder"]}
        return all(os.path.isdir(folder) and os.access(folder, os.W_OK) for folder in folders)
    from board.celery import app

    try:
        with app.connection_for_write(connect_timeout=BROKER_TIMEOUT_SECONDS) as broker:
            broker.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as error:  # kombu raises the transport's own errors: any is "down"
        log.warning("readiness: broker failed with %s", type(error).__name__)
        return False
    return True


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
