"""/healthz and /readyz (SPEC 12): named failing parts, any Host, no token, no writes."""

import json
import shutil
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import counts, is_postgres
from tests.production.conftest import call

# Port 9 (discard) has no database behind it: every connection attempt is refused.
UNREACHABLE_DATABASE = "postgres://settle@127.0.0.1:9/settle"


# --- In process: the answers and what they touch ------------------------------------------


@pytest.mark.django_db
def test_it_answers_healthz_without_touching_the_database(client):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/healthz", HTTP_HOST="10.20.30.40")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert len(queries) == 0


@pytest.mark.django_db
def test_it_answers_readyz_whatever_the_host_and_writes_nothing(client):
    before = counts()
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/readyz", HTTP_HOST="10.20.30.40:8000")

    assert response.status_code == 200
    assert response.json() == {"status": "ready"}
    assert before == counts()
    written = [q["sql"] for q in queries if not q["sql"].lstrip().upper().startswith("SELECT")]
    assert written == []


@pytest.mark.django_db
def test_other_paths_still_refuse_a_host_not_allowed(client):
    response = client.get("/threads/", HTTP_HOST="10.20.30.40")

    assert response.status_code == 400


@pytest.mark.django_db
def test_it_answers_no_other_method_on_the_probes(client):
    response = client.post("/healthz", HTTP_HOST="localhost")

    assert response.status_code == 404


# --- A live server: real faults -----------------------------------------------------------


def readyz(base: str) -> tuple[int, dict]:
    status, _, body = call(base, "/readyz", headers={"Host": "192.0.2.10"})
    return status, json.loads(body)


def test_readyz_names_the_database_when_it_cannot_be_reached(serve):
    served = serve(DATABASE_URL=UNREACHABLE_DATABASE)

    status, body = readyz(served.base)

    # Migrations cannot be checked without the database, so they are not named.
    assert (status, body) == (503, {"status": "unavailable", "failing": ["database"]})


def test_readyz_names_migrations_not_applied(serve, tmp_path):
    served = serve(DATABASE_URL=f"sqlite:///{tmp_path / 'never-migrated.sqlite3'}")

    status, body = readyz(served.base)

    assert (status, body) == (503, {"status": "unavailable", "failing": ["migrations"]})


@pytest.mark.django_db(transaction=True)
def test_readyz_is_degraded_not_failed_when_the_redis_broker_is_down(serve):
    served = serve(CELERY_BROKER_URL="redis://127.0.0.1:9/0")

    status, body = readyz(served.base)

    assert (status, body) == (200, {"status": "ready", "degraded": ["broker"]})


@pytest.mark.django_db(transaction=True)
def test_readyz_is_degraded_when_the_embedded_broker_folder_is_gone(serve, tmp_path):
    broker = tmp_path / "broker"
    served = serve(SETTLE_BROKER_DIR=str(broker), CELERY_BROKER_URL="")
    assert readyz(served.base) == (200, {"status": "ready"})

    shutil.rmtree(broker)

    assert readyz(served.base) == (200, {"status": "ready", "degraded": ["broker"]})


class SilentBroker:
    """A broker that accepts every connection and never says a word (a hung Redis or
    RabbitMQ, as issue 38 found): only a bound on the wait ends a conversation with it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()
        for sock in self.held:
            sock.close()


def timed(base: str, path: str) -> tuple[int, dict, float]:
    began = time.monotonic()
    status, _, body = call(base, path, headers={"Host": "192.0.2.10"}, timeout=60)
    return status, json.loads(body), time.monotonic() - began


DEGRADED = {"status": "ready", "degraded": ["broker"]}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("url", ["redis://127.0.0.1:{port}/0",
                                 "amqp://guest:guest@127.0.0.1:{port}//"])
def test_readyz_answers_within_a_second_when_the_broker_accepts_and_never_answers(serve, url):
    broker = SilentBroker()
    try:
        served = serve(CELERY_BROKER_URL=url.format(port=broker.port), WEB_CONCURRENCY="2")
        # when: one probe, then six at once on the two workers with /healthz among them
        alone = timed(served.base, "/readyz")
        with ThreadPoolExecutor(7) as pool:
            together = [pool.submit(timed, served.base, "/readyz") for _ in range(6)]
            time.sleep(0.1)  # the probes reach the workers first
            health = pool.submit(timed, served.base, "/healthz").result()
            together = [probe.result() for probe in together]
    finally:
        broker.close()

    # then: ready, the broker named degraded, within a second (and a half, for a busy
    # machine), each probe alone; six at once still leave /healthz answered in seconds
    status, body, seconds = alone
    assert (status, body) == (200, DEGRADED) and seconds < 1.5, alone
    assert [(status, body) for status, body, _ in together] == [(200, DEGRADED)] * 6
    assert max(seconds for *_, seconds in together) < 3, together
    assert health[:2] == (200, {"status": "ok"}) and health[2] < 3, health


class DatabaseLink:
    """A TCP relay between the server and PostgreSQL that the test can cut and restore:
    a database the server cannot reach, with PostgreSQL itself left alone."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.up = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()  # the server's attempt fails at once, like a refused one
                continue
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        self.up = False
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.sockets.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_readyz_fails_while_the_database_is_cut_off_and_recovers_when_it_is_back(serve):
    assert is_postgres()
    params = connection.settings_dict
    link = DatabaseLink((params["HOST"] or "127.0.0.1", int(params["PORT"] or 5432)))
    try:
        served = serve(
            DATABASE_URL=f"postgres://{params['USER']}@127.0.0.1:{link.port}/{params['NAME']}",
            WEB_CONCURRENCY="2",
        )
        assert readyz(served.base) == (200, {"status": "ready"})

        link.cut()
        # Six probes each way, so both workers are asked, whichever answers.
        down = [readyz(served.base) for _ in range(6)]
        link.restore()
        up = [readyz(served.base) for _ in range(6)]
    finally:
        link.close()

    assert down == [(503, {"status": "unavailable", "failing": ["database"]})] * 6
    assert up == [(200, {"status": "ready"})] * 6
