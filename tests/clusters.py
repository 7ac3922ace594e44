"""Private PostgreSQL clusters for tests and benchmarks: a primary, a streaming standby.

Made with the server's own tools (`initdb`, `pg_ctl`, `pg_basebackup -R`) in a temporary
folder on free ports, run as the `postgres` user when we are root (PostgreSQL refuses to
run as root), and removed at the end. The replication tests (SPEC 12.1) and `make
bench`'s WAL table use them: a private cluster has no other writer, so its WAL position
moves only with what we send it.
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda path: int(path.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


BIN = _bin_dir()


def missing() -> str | None:
    """Why no private cluster can be made here, or None."""
    if BIN is None:
        return "PostgreSQL's server binaries (initdb, pg_ctl) are not installed"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "runuser is needed to run PostgreSQL as the postgres user"
    return None


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Cluster:
    folder: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "settle") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "settle", **kwargs) -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                               dbname=database, autocommit=True, connect_timeout=5, **kwargs)

    def sql(self, statement: str, params=(), database: str = "settle"):
        with self.connect(database) as connection:
            cursor = connection.execute(statement, params)
            return cursor.fetchall() if cursor.description else None

    def start(self) -> None:
        _as_postgres([str(BIN / "pg_ctl"), "-D", str(self.data), "-l",
                      str(self.folder / "server.log"), "-w", "-t", "60", "start"])

    def stop(self, mode: str = "fast") -> None:
        _as_postgres([str(BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def promote(self) -> None:
        _as_postgres([str(BIN / "pg_ctl"), "-D", str(self.data), "-w", "promote"])

    def running(self) -> bool:
        return subprocess.run(
            ["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        ).returncode == 0

    def configure(self, **settings: str) -> None:
        """ALTER SYSTEM each setting and reload (for settings a reload applies)."""
        for name, value in settings.items():
            self.sql(f"ALTER SYSTEM SET {name} = '{value}'", database="postgres")
        self.sql("SELECT pg_reload_conf()", database="postgres")

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def _configured(folder: Path, port: int, extra: dict[str, str]) -> None:
    lines = {
        "port": str(port),
        "listen_addresses": "'127.0.0.1'",
        "unix_socket_directories": f"'{folder}'",
        "fsync": "on",
        "max_connections": "100",
        "shared_buffers": "32MB",
        "wal_level": "replica",
        "max_wal_senders": "5",
        "hot_standby": "on",
        **extra,
    }
    with open(folder / "data" / "postgresql.conf", "a") as conf:
        for name, value in lines.items():
            conf.write(f"{name} = {value}\n")


def _new_cluster(prefix: str) -> Cluster:
    """A temporary folder the server's user owns, and a free port."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    return Cluster(folder, _free_port())


@contextmanager
def primary(**settings: str) -> Iterator[Cluster]:
    """A new cluster with a `settle` database, running; removed at the end."""
    cluster = _new_cluster("settle-pg-")
    try:
        _as_postgres([str(BIN / "initdb"), "-D", str(cluster.data), "--auth=trust", "--no-sync",
                      "-U", "postgres", "--encoding=UTF8", "--locale=C.UTF-8"])
        _configured(cluster.folder, cluster.port, settings)
        cluster.start()
        cluster.sql("CREATE DATABASE settle", database="postgres")
        yield cluster
    finally:
        _remove(cluster)


@contextmanager
def standby(of: Cluster, *, name: str = "settle_standby", **settings: str) -> Iterator[Cluster]:
    """A streaming standby of `of` (pg_basebackup -R), running; removed at the end. Its
    walreceiver reports `name` (cluster_name), which synchronous_standby_names names."""
    cluster = _new_cluster("settle-pg-standby-")
    try:
        _as_postgres([str(BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(of.port),
                      "-U", "postgres", "-D", str(cluster.data), "-R", "-X", "stream",
                      "--checkpoint=fast"])
        _configured(cluster.folder, cluster.port, {"cluster_name": f"'{name}'", **settings})
        cluster.start()
        caught_up(of, cluster)
        yield cluster
    finally:
        _remove(cluster)


def caught_up(primary: Cluster, standby: Cluster, *, seconds: float = 30) -> None:
    """Wait until `standby` has replayed everything `primary` has written."""
    (target,), = primary.sql("SELECT pg_current_wal_lsn()::text", database="postgres")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        (done,), = standby.sql(
            "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,), database="postgres"
        )
        if done:
            return
        time.sleep(0.1)
    raise TimeoutError("the standby did not catch up:\n" + standby.log())


def _remove(cluster: Cluster) -> None:
    if (cluster.data / "postmaster.pid").exists():
        try:
            cluster.stop("immediate")
        except subprocess.CalledProcessError:
            pass
    shutil.rmtree(cluster.folder, ignore_errors=True)
