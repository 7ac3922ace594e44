"""What a post costs the PostgreSQL primary (SPEC 12.1), beside the receipt peer.

A private cluster (tests/clusters.py) with no other writer: `full_page_writes = off` and
no autovacuum or timed checkpoint, so the WAL between two positions is the records the
requests wrote and nothing else. Settle and the receipt peer (tests/bench/receipt_peer/,
the seed article's pattern in the ORM) each serve their own database on it through
gunicorn; one request at a time, `COUNT` new questions, then the same requests again
(replays). For each case: WAL record bytes a request (pg_walinspect's record_size, full-
page images apart) and the server's CPU a request (user + system time of every process
of the cluster, from /proc). Then Settle's new post and replay, record by record: what
each byte is for (docs/write-path.md explains the table).

Run by `make bench` after the HTTP cases; `python tests/bench/primary_cost.py` alone.
`BENCH_PRIMARY_BY_RELATION=1` also prints each case's records by table and index;
`BENCH_PRIMARY_AFTER_MIGRATE_SQL=<file>` runs that file's SQL on Settle's database after
its migrations, to measure a cut (an index dropped, a column narrowed) before building it.
"""

import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests import clusters  # noqa: E402
from tests.bench.http_bench import (  # noqa: E402
    bench_environment,
    manage,
    peer_environment,
    peer_token,
    post_json,
    question_payload,
    start_server,
)

COUNT = int(os.environ.get("BENCH_PRIMARY_COUNT", "300"))
# For trying a cut before building it: a file of SQL run on Settle's database after its
# migrations (e.g. `DROP INDEX entry_created;`); and each case's records by relation.
AFTER_MIGRATE_SQL = os.environ.get("BENCH_PRIMARY_AFTER_MIGRATE_SQL", "")
BY_RELATION = bool(os.environ.get("BENCH_PRIMARY_BY_RELATION"))
WARM = 30  # prepared statements begin on a statement's fifth run on a connection
TICKS = os.sysconf("SC_CLK_TCK")


def cluster_cpu_seconds(cluster: clusters.Cluster) -> float:
    """User + system time of the postmaster and every process it started."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == postmaster or int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def wal_position(cluster: clusters.Cluster) -> str:
    (position,), = cluster.sql("SELECT pg_current_wal_insert_lsn()::text", database="postgres")
    return position


def wal_records(cluster: clusters.Cluster, start: str, end: str) -> list[tuple[str, int, int]]:
    """(record type, count, record bytes) between two positions, full-page images apart."""
    cluster.sql("SELECT pg_switch_wal()", database="postgres")  # `end` flushed, readable
    (moved,), = cluster.sql("SELECT %s::pg_lsn > %s::pg_lsn", (end, start), database="postgres")
    if not moved:
        return []
    return cluster.sql(
        "SELECT \"resource_manager/record_type\", count, record_size"
        " FROM pg_get_wal_stats(%s::pg_lsn, %s::pg_lsn, per_record => true)"
        " WHERE count > 0 ORDER BY record_size DESC",
        (start, end), database="postgres",
    )


def records_by_relation(cluster: clusters.Cluster, start: str, end: str,
                        database: str) -> list[tuple]:
    """(record type, relation of its first block, count, record bytes) between two
    positions, relations named as in `database`: which table or index each byte went to."""
    rows = cluster.sql(
        "SELECT record_type, substring(block_ref from 'rel \\d+/\\d+/(\\d+)'),"
        " count(*), sum(record_length - fpi_length)"
        " FROM pg_get_wal_records_info(%s::pg_lsn, %s::pg_lsn) GROUP BY 1, 2 ORDER BY 4 DESC",
        (start, end), database="postgres",
    )
    names = dict(cluster.sql(
        "SELECT pg_relation_filenode(oid)::text, relname FROM pg_class"
        " WHERE pg_relation_filenode(oid) IS NOT NULL", database=database,
    ))
    return [(kind, names.get(node, node or "-"), count, size) for kind, node, count, size in rows]


def measure(cluster: clusters.Cluster, url: str, token: str, payloads: list[dict],
            relations_of: str = "") -> dict:
    """Post `payloads` one at a time; WAL and CPU a request, and the records (printed by
    relation, named as in the database `relations_of`, when given)."""
    cluster.sql("CHECKPOINT", database="postgres")
    time.sleep(0.5)
    start, cpu = wal_position(cluster), cluster_cpu_seconds(cluster)
    statuses = set()
    for payload in payloads:
        statuses.add(post_json(url, payload, token)[0])
    cpu = cluster_cpu_seconds(cluster) - cpu
    end = wal_position(cluster)
    records = wal_records(cluster, start, end)
    if relations_of and records:
        for kind, relation, count, size in records_by_relation(cluster, start, end,
                                                               relations_of):
            print(f"  {kind:<20}{relation:<36}{count / len(payloads):>6.2f}"
                  f"{size / len(payloads):>8.0f} B")
    return {
        "statuses": statuses,
        "wal": sum(size for _, _, size in records) / len(payloads),
        "cpu_ms": cpu * 1000 / len(payloads),
        "records": records,
    }


def served(env: dict, app: str, log_name: str, probe: str):
    return start_server(env, app=app, probe=probe, log_name=log_name)


def main() -> None:
    missing = clusters.missing()
    if missing:
        print(f"(no primary-cost table: {missing})")
        return
    (ROOT / "var").mkdir(exist_ok=True)
    settings = {"full_page_writes": "off", "autovacuum": "off", "checkpoint_timeout": "1d",
                "max_wal_size": "10GB"}
    with clusters.primary(**settings) as cluster:
        cluster.sql("CREATE EXTENSION pg_walinspect", database="postgres")
        cluster.sql("CREATE DATABASE peer", database="postgres")
        env = {**bench_environment(), "DATABASE_URL": cluster.url("settle")}
        manage(env, "migrate", "--noinput", "-v", "0")
        if AFTER_MIGRATE_SQL:
            cluster.sql(Path(AFTER_MIGRATE_SQL).read_text())
        token = manage(env, "issue_token", "bench-primary").strip().splitlines()[-1]
        peer_env = peer_environment({**env, "DATABASE_URL": cluster.url("peer")}, "peer")
        peer_bearer = peer_token(peer_env)

        results = {}
        for name, server_env, app, bearer, path in (
            ("settle", env, "board.wsgi", token, "/api/v1/entries"),
            ("peer", peer_env, "tests.bench.receipt_peer.wsgi", peer_bearer, "/api/entries"),
        ):
            process, base = served(server_env, app, f"bench-primary-{name}.log",
                                   "/api/v1/threads" if name == "settle" else "/api/entries")
            try:
                warm = [question_payload(str(uuid.uuid4()), n) for n in range(WARM)]
                for payload in warm + warm:
                    post_json(base + path, payload, bearer)
                payloads = [question_payload(str(uuid.uuid4()), n) for n in range(COUNT)]
                relations_of = name if BY_RELATION else ""  # each its own database's name
                for case in ("new", "replay"):
                    if relations_of:
                        print(f"{name} {case}, by relation (a request):")
                    results[name, case] = measure(cluster, base + path, bearer, payloads,
                                                  relations_of)
            finally:
                os.killpg(process.pid, 15)
                process.wait(10)

    print(f"\nWhat a request costs the primary: one at a time, {COUNT} each, a private "
          "PostgreSQL, WAL records without full-page images")
    print(f"{'case':<16}{'WAL B':>8}{'CPU ms':>9}  statuses")
    for (name, case), result in results.items():
        print(f"{name + ' ' + case:<16}{result['wal']:>8.0f}{result['cpu_ms']:>9.2f}  "
              f"{sorted(result['statuses'])}")
    for case in ("new", "replay"):
        settle, peer = results["settle", case], results["peer", case]
        wal = settle["wal"] / peer["wal"] if peer["wal"] else float("inf")
        print(f"settle/peer {case}: WAL {wal:.2f}, CPU {settle['cpu_ms'] / peer['cpu_ms']:.2f}")
    for case in ("new", "replay"):
        print(f"\nSettle {case}, record by record (bytes a request):")
        for kind, count, size in results["settle", case]["records"]:
            print(f"  {kind:<28}{count / COUNT:>6.2f} records{size / COUNT:>8.0f} B")
    settle_new, peer_new = results["settle", "new"], results["peer", "new"]
    print(
        f"primary: settle_new_wal={settle_new['wal']:.0f} peer_new_wal={peer_new['wal']:.0f} "
        f"settle_replay_wal={results['settle', 'replay']['wal']:.0f} "
        f"peer_replay_wal={results['peer', 'replay']['wal']:.0f} "
        f"new_cpu/peer={settle_new['cpu_ms'] / peer_new['cpu_ms']:.2f} "
        f"replay_cpu/peer="
        f"{results['settle', 'replay']['cpu_ms'] / results['peer', 'replay']['cpu_ms']:.2f}"
    )


if __name__ == "__main__":
    main()
