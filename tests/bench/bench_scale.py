"""The console, the retention jobs and the agent side timed at millions of entries
(issue 39): `make bench-scale`.

For each size (the baseline, `SCALE_BASELINE`, default 50,000 entries, then `SCALE_ENTRIES`,
default 5,000,000 on PostgreSQL and 1,000,000 on SQLite) it

1. loads a dataset of its own, once: PostgreSQL `<database>_scale_<N>` on the server
   DATABASE_URL names, SQLite `var/scale-<N>.sqlite3`. A few hundred real posts through the
   API (questions, replies, a 200-reply thread, three principals and anonymous), then
   multiplied in SQL, each row written once in its final state with the bulk tables'
   secondary indexes, foreign keys and unique constraints set aside, then built (all of
   them, as the migrations made them) before `VACUUM ANALYZE`: an entry and its receipt per
   entry (the seed's digests, a fresh request_id), hidden and deleted ones, N/5
   tombstones, a week of attempts, a month of deliveries (1% `outcome_unknown`) with their
   attempts, audit events, 90 days of maintenance runs, and a purge backlog (the oldest
   ~9% of receipts expired, as a 30-day retention leaves them when the purge falls
   behind), topped up where it is smaller to BACKLOG_MINIMUM rows due for every purge,
   so that each purge's timed batch of 1000 is a full one at the baseline too. A table
   `bench_scale_loaded` records the load; a dataset that has one is not loaded again
   (only `migrate` runs, so the numbers can be taken again on newer code);
2. serves it as production does (gunicorn -c deploy/gunicorn.conf.py, 2 workers, DEBUG
   off) and logs in through /console/login/ as a superuser made for the bench;
3. times to first byte (response headers; Django sends them once the page is rendered),
   median of 3 after one untimed request: every console page, each list's first, next
   and last page (by the nav's rel links, or the old `?page=N`), the entries' hidden
   filter and searches, deliveries by state; each purge's batch (batch_size 1000, a dry
   run: rolled back) and the forecast beat job (`forecast_record`, as `forecast-purges`
   runs it) in a process of their own; the agent side;
4. prints the table (page or job | baseline | N | ratio), flagging anything over 1 s or
   over twice the baseline, and writes it to var/bench-scale-<engine>-<N>.md.

`SCALE_EXPLAIN=1` (PostgreSQL) also writes EXPLAIN (ANALYZE, BUFFERS) of the slowest
statements of the slow pages and jobs at N to var/scale-plans-<N>.md.

Run: `make bench-scale` (SQLite), `DATABASE_URL=postgres://... make bench-scale`;
`SCALE_ENTRIES=1000000` picks N. Sub-commands (each in the dataset's environment):
`load N`, `jobs`, `explain`.
"""

import contextlib
import http.cookiejar
import json
import math
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VAR = ROOT / "var"
REPEATS = 3
SLOW_SECONDS = 1.0
# Gunicorn's worker timeout is 30 s; a page past it is an error the operator sees.
HTTP_TIMEOUT = 120
RARE_WORD = "zanzibarquokka"
COMMON_WORD = "retry"
OPERATOR = ("scale-operator", "scale-operator-password-1")
SPAN = timedelta(days=33)  # entries' age span: a 30-day retention and 3 days' backlog
RECEIPT_RETENTION = timedelta(days=30)
# Rows due for every purge at least, so that its timed batch of 1000 is a full one at the
# baseline as at N (at millions the backlogs are far larger already and nothing is added).
BACKLOG_MINIMUM = 1_500


def is_postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def default_entries(url: str) -> int:
    return 5_000_000 if is_postgres(url) else 1_000_000


def dataset_url(base_url: str, n: int) -> str:
    if is_postgres(base_url):
        parts = urllib.parse.urlsplit(base_url)
        return urllib.parse.urlunsplit(parts._replace(path=f"/{dataset_name(base_url, n)}"))
    return f"sqlite:///{VAR / f'scale-{n}.sqlite3'}"


def dataset_name(base_url: str, n: int) -> str:
    """`<DATABASE_URL's database>_scale_<N>`: each of the engineers sharing one server
    has a database of their own, and so a dataset of their own."""
    base = urllib.parse.urlsplit(base_url).path.strip("/") or "settle"
    return f"{base}_scale_{n}"


def dataset_env(base_url: str, n: int) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": dataset_url(base_url, n),
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-scale-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "SETTLE_SOURCE_HOURLY_LIMIT": str(10**9),
        "SETTLE_OVERALL_HOURLY_LIMIT": str(10**9),
        "DJANGO_SETTINGS_MODULE": "board.settings",
    }


def database_create(base_url: str, n: int) -> None:
    """The dataset's own database, made anew unless a load finished in it (a load that
    stopped half-way is not resumed: it starts again from an empty database)."""
    VAR.mkdir(exist_ok=True)
    if not is_postgres(base_url):
        path = VAR / f"scale-{n}.sqlite3"
        if path.exists():
            import sqlite3

            with contextlib.closing(sqlite3.connect(path)) as connection:
                if _loaded(connection.execute, sqlite3.OperationalError):
                    return
            for stale in VAR.glob(f"scale-{n}.sqlite3*"):
                stale.unlink()
        return
    import psycopg

    parts = urllib.parse.urlsplit(base_url)
    name = dataset_name(base_url, n)
    with psycopg.connect(urllib.parse.urlunsplit(parts._replace(path="/postgres")),
                         autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            with psycopg.connect(urllib.parse.urlunsplit(parts._replace(path=f"/{name}")),
                                 autocommit=True) as dataset:
                if _loaded(dataset.execute, psycopg.errors.UndefinedTable):
                    return
            admin.execute(f'DROP DATABASE "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')


def _loaded(execute, missing: type[Exception]) -> bool:
    try:
        return execute("SELECT count(*) FROM bench_scale_loaded").fetchone()[0] > 0
    except missing:
        return False


def in_dataset(env: dict, *args: str, capture: bool = True) -> str:
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), *args], cwd=ROOT, env=env,
        capture_output=capture, text=True,
    )
    if done.returncode:
        raise SystemExit(f"bench_scale {' '.join(args)} failed:\n{done.stderr if capture else ''}")
    return done.stdout if capture else ""


# --- Loading (runs inside the dataset's environment, Django set up) --------------------


class Sql:
    """The few expressions that differ between the engines, as SQL text."""

    def __init__(self, vendor: str):
        self.pg = vendor == "postgresql"

    def uuid(self) -> str:
        return "gen_random_uuid()" if self.pg else "lower(hex(randomblob(16)))"

    def uuid7(self, moment: str) -> str:
        """A version 7 UUID of `moment`, as maintenance/deliveries/outbox.py makes a
        delivery's id."""
        if self.pg:
            return ("encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing "
                    f"substring(int8send(floor(extract(epoch from {moment}) * 1000)::bigint) "
                    "from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid")
        return (f"lower(printf('%%012x', CAST((julianday({moment}) - 2440587.5) * 86400000 "
                "AS INTEGER)) || '7' || substr(hex(randomblob(2)), 2) "
                "|| substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(8)), 2))")

    def moment(self, base: str, seconds: str) -> str:
        """`base` (a timestamp column or parameter) plus `seconds` (an SQL number)."""
        if self.pg:
            return f"(({base})::timestamptz + ({seconds}) * interval '1 second')"
        return f"strftime('%%Y-%%m-%%d %%H:%%M:%%f', {base}, printf('%%+.3f seconds', {seconds}))"

    def day(self, base: str, days: str) -> str:
        if self.pg:
            return f"(({base})::date + ({days})::int)"
        return f"date({base}, printf('%%+d days', {days}))"

    def json(self, text: str) -> str:
        return f"CAST({text} AS jsonb)" if self.pg else text

    def true(self, condition: str) -> str:
        return f"({condition})"


# The tables the loader fills in bulk: their secondary indexes and their foreign keys
# and unique constraints are set aside while it writes and rebuilt once at the end, every
# one as the migrations made it (`_rebuild` checks the names), which costs a fraction of
# keeping them up to date row by row.
BULK_TABLES = (
    "board_entry", "receipts_receipt", "receipts_tombstone", "receipts_attempt",
    "maintenance_delivery", "maintenance_deliveryattempt", "moderation_auditevent",
    "maintenance_maintenancerun",
)


def _set_aside(cursor, pg: bool) -> list[str]:
    """Drop the bulk tables' secondary indexes, foreign keys and unique constraints (none
    of which an FK of another table depends on); return the statements that rebuild them,
    in an order that works (indexes, then unique constraints, then foreign keys)."""
    if not pg:
        marks = ",".join(["%s"] * len(BULK_TABLES))
        cursor.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f"AND tbl_name IN ({marks})", list(BULK_TABLES))
        rows = cursor.fetchall()
        for name, _ in rows:
            cursor.execute(f'DROP INDEX "{name}"')
        return [definition for _, definition in rows]
    tables = list(BULK_TABLES)
    cursor.execute("""
        SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid), c.contype
        FROM pg_constraint c
        WHERE c.conrelid::regclass::text = ANY(%s) AND (c.contype = 'f' OR (c.contype = 'u'
            AND NOT EXISTS (SELECT 1 FROM pg_constraint r
                            WHERE r.contype = 'f' AND r.conindid = c.conindid)))
        ORDER BY c.contype DESC
    """, [tables])
    constraints = cursor.fetchall()  # 'u' before 'f': the rebuild order
    for table, name, _, _ in reversed(constraints):
        cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
    cursor.execute("""
        SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename = ANY(%s)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                          WHERE c.conindid = (quote_ident(i.indexname))::regclass)
    """, [tables])
    indexes = cursor.fetchall()
    for name, _ in indexes:
        cursor.execute(f'DROP INDEX "{name}"')
    return [definition for _, definition in indexes] + [
        f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}'
        for table, name, definition, _ in constraints
    ]


def _index_names(cursor, pg: bool) -> set[str]:
    if pg:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s) UNION ALL "
                       "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text = ANY(%s)",
                       [list(BULK_TABLES), list(BULK_TABLES)])
    else:
        marks = ",".join(["%s"] * len(BULK_TABLES))
        cursor.execute(f"SELECT name FROM sqlite_master WHERE type = 'index' "
                       f"AND tbl_name IN ({marks})", list(BULK_TABLES))
    return {row[0] for row in cursor.fetchall()}


def _rebuild(cursor, pg: bool, statements: list[str], before: set[str]) -> None:
    if pg:
        # The machine's two cores and a sort in memory for each build.
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute("SET max_parallel_maintenance_workers = 2")
    for statement in statements:
        cursor.execute(statement)
    after = _index_names(cursor, pg)
    if after != before:
        raise SystemExit(f"the load's rebuild differs from the migrations' schema: "
                         f"missing {sorted(before - after)}, extra {sorted(after - before)}")


def load(n: int) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", "--noinput", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_scale_loaded "
            "(entries bigint, seconds double precision, finished_at varchar(40))"
        )
        cursor.execute("SELECT entries, seconds FROM bench_scale_loaded")
        row = cursor.fetchone()
    if row:
        print(json.dumps({"loaded": row[0], "seconds": row[1], "skipped": True}))
        return
    began = time.monotonic()
    steps = _load(n)
    seconds = round(time.monotonic() - began, 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_scale_loaded VALUES (%s, %s, %s)",
            [n, seconds, datetime.now(UTC).isoformat()],
        )
    print(json.dumps({"loaded": n, "seconds": seconds, "steps": steps, "skipped": False}))


def _load(n: int) -> dict:
    from django.db import connection, transaction

    from board.models import Entry, Hold
    from maintenance.models import Endpoint

    steps = {}
    clock = time.monotonic()
    seed_posts()
    steps["seed posts (API)"] = round(time.monotonic() - clock, 1)
    sql = Sql(connection.vendor)
    now = datetime.now(UTC).replace(microsecond=0)
    now_text = now.isoformat() if sql.pg else now.strftime("%Y-%m-%d %H:%M:%S")
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id), count(*) FROM board_entry")
        m, seeded = cursor.fetchone()
        cursor.execute("SELECT max(id) FROM receipts_receipt")
        seed_receipts = cursor.fetchone()[0]
    copies = max(1, math.ceil(n / seeded))
    span = SPAN.total_seconds()

    def timed(name: str, statement: str, params: dict | None = None) -> int:
        clock = time.monotonic()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, {"now": now_text, "m": m, **(params or {})})
            written = cursor.rowcount
        steps[name] = round(steps.get(name, 0) + time.monotonic() - clock, 1)
        return written

    def top_up(name: str, due: str, statement: str, params: dict | None = None) -> None:
        """`statement` writes `%(count)s` rows more when `due` counts fewer than
        BACKLOG_MINIMUM rows due for the purge."""
        with connection.cursor() as cursor:
            cursor.execute(due, {"now": now_text, "m": m})
            missing = max(0, BACKLOG_MINIMUM - cursor.fetchone()[0])
        written = timed(name, statement, {"count": missing, **(params or {})}) if missing else 0
        steps[f"{name}, rows added"] = written

    with transaction.atomic(), connection.cursor() as cursor:
        schema = _index_names(cursor, sql.pg)
        rebuild = _set_aside(cursor, sql.pg)
    steps["indexes set aside"] = len(rebuild)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_scale_n (i integer PRIMARY KEY)")
        cursor.execute("DELETE FROM bench_scale_n")
        limit = max(copies, 3000)
        for start in range(0, limit, 1000):
            values = ",".join(f"({i})" for i in range(start, min(start + 1000, limit)))
            cursor.execute(f"INSERT INTO bench_scale_n (i) VALUES {values}")

    # The seed becomes the oldest copy (k = 0); copy k's entry e has id e.id + k*m.
    position = "(({k}) * 1.0 / {copies} + (e.id * 1.0 / %(m)s) / {copies})"
    seconds = f"({position} - 1) * {span}"
    timed("seed moved to the oldest", f"""
        UPDATE board_entry SET created_at = {sql.moment('%(now)s', seconds.format(
            k=0, copies=copies).replace('e.id', 'board_entry.id'))}
    """)
    chunk = max(1, 200_000 // seeded)
    for first in range(1, copies, chunk):
        last = min(copies, first + chunk)
        k_seconds = seconds.format(k="k.i", copies=copies)
        created = sql.moment('%(now)s', k_seconds)
        # Written once in their final state: a common word in a tenth of them, 1% hidden,
        # 0.5% deleted (text and actor gone); an UPDATE after would write each row twice.
        new_id = "(e.id + k.i * %(m)s)"
        deleted = f"{new_id} %% 200 = 41"
        timed("entries", f"""
            INSERT INTO board_entry (id, type, parent_id, title, body, actor_name, actor_model,
                actor_trigger, submission_mode, visible, deleted_at, route, source,
                principal_id, created_at)
            SELECT {new_id}, e.type,
                CASE WHEN e.parent_id IS NULL THEN NULL ELSE e.parent_id + k.i * %(m)s END,
                CASE WHEN {deleted} THEN CASE WHEN e.type = 'question' THEN '' END
                     ELSE e.title END,
                CASE WHEN {deleted} THEN ''
                     WHEN {new_id} %% 10 = 3 THEN e.body || ' {COMMON_WORD} this later'
                     ELSE e.body END,
                CASE WHEN {deleted} THEN '' ELSE e.actor_name END,
                CASE WHEN {deleted} THEN '' ELSE e.actor_model END,
                CASE WHEN {deleted} THEN '' ELSE e.actor_trigger END,
                e.submission_mode,
                CASE WHEN {new_id} %% 100 = 17 THEN {sql.true('1 = 0')} ELSE e.visible END,
                CASE WHEN {deleted} THEN {sql.moment(created, '3600')} END,
                e.route, e.source, e.principal_id, {created}
            FROM board_entry e CROSS JOIN bench_scale_n k
            WHERE e.id <= %(m)s AND k.i >= %(first)s AND k.i < %(last)s
            ORDER BY k.i, e.id
        """, {"first": first, "last": last})
    if sql.pg:
        timed("entries", "SELECT setval(pg_get_serial_sequence('board_entry', 'id'), "
                         "(SELECT max(id) FROM board_entry))")
    # Deleted entries past the deletion policy (30 days): 0.5% of the oldest 3 days' is
    # 2,250 at 5,000,000 but 22 at 50,000. The oldest copies' entries make up the rest,
    # deleted an hour after they were written like the others (before their receipts are
    # written, which take both moments from them). Under ~20,000 entries too few are that
    # old: the youngest of them are moved back to just past the policy.
    past = sql.moment("%(now)s", str(-(RECEIPT_RETENTION.total_seconds() + 7200)))
    top_up("deletion backlog",
           f"SELECT count(*) FROM board_entry WHERE deleted_at < "
           f"{sql.moment('%(now)s', str(-RECEIPT_RETENTION.total_seconds()))}", f"""
        UPDATE board_entry SET
            created_at = CASE WHEN created_at < {past} THEN created_at ELSE {past} END,
            deleted_at = {sql.moment(f"CASE WHEN created_at < {past} THEN created_at "
                                     f"ELSE {past} END", '3600')},
            body = '', title = CASE WHEN type = 'question' THEN '' END, actor_name = '',
            actor_model = '', actor_trigger = ''
        WHERE id IN (SELECT id FROM board_entry WHERE id > %(m)s AND deleted_at IS NULL
            ORDER BY id LIMIT %(count)s)
    """)
    # A rare word in three entries (not deleted ones: their text is gone).
    timed("search words", f"""
        UPDATE board_entry SET body = body || ' {RARE_WORD}'
        WHERE id IN (%(m)s + 7, (SELECT max(id) / 2 FROM board_entry),
                     (SELECT max(id) - 11 FROM board_entry)) AND deleted_at IS NULL
    """)
    expires = sql.moment("e.created_at", str(RECEIPT_RETENTION.total_seconds()))
    for first in range(1, copies, chunk):
        last = min(copies, first + chunk)
        timed("receipts", f"""
            INSERT INTO receipts_receipt (scope, operation, request_id, digests,
                packed_digests, state, result_id, first_route, attempts, first_seen_at,
                last_seen_at, receipt_expires_at, deleted_at)
            SELECT r.scope, r.operation, {sql.uuid()}, r.digests, r.packed_digests,
                CASE WHEN e.deleted_at IS NULL THEN 'succeeded' ELSE 'deleted' END, e.id,
                r.first_route, 1, e.created_at, e.created_at, {expires}, e.deleted_at
            FROM board_entry e
            JOIN receipts_receipt r ON r.result_id = ((e.id - 1) %% %(m)s) + 1
                AND r.id <= %(seed_receipts)s
            WHERE e.id > %(low)s AND e.id <= %(high)s
            ORDER BY e.id
        """, {"low": first * m, "high": last * m, "seed_receipts": seed_receipts})
    timed("receipts", f"""
        UPDATE receipts_receipt SET first_seen_at = e.created_at, last_seen_at = e.created_at,
            receipt_expires_at = {expires}
        FROM board_entry e WHERE e.id = receipts_receipt.result_id AND e.id <= %(m)s
    """)
    # Under ~12,000 entries the oldest 9% are fewer than the minimum: the next oldest
    # receipts expire an hour ago, as a shorter entry policy would have had them.
    moment_now = sql.moment("%(now)s", "0")
    top_up("thread backlog",
           f"SELECT count(*) FROM receipts_receipt WHERE receipt_expires_at < {moment_now}", f"""
        UPDATE receipts_receipt SET receipt_expires_at = {sql.moment('%(now)s', '-3600')}
        WHERE id IN (SELECT id FROM receipts_receipt WHERE receipt_expires_at >= {moment_now}
            ORDER BY receipt_expires_at, id LIMIT %(count)s)
    """)
    # Numbers 0 .. 9M by two factors of bench_scale_n, for the tables not made of entries.
    numbers = "(SELECT a.i * 3000 + b.i AS i FROM bench_scale_n a CROSS JOIN bench_scale_n b " \
              "WHERE a.i <= %(count)s / 3000 AND b.i < 3000 AND a.i * 3000 + b.i < %(count)s) s"
    tombstones = n // 5
    timed("tombstones", f"""
        INSERT INTO receipts_tombstone (key, reason, expires_at)
        SELECT {sql.uuid()}, CASE WHEN s.i %% 7 = 0 THEN 2 ELSE 1 END,
            {sql.day('%(now)s', '(s.i %% 90) - 3')}
        FROM {numbers}
    """, {"count": tombstones})
    top_up("tombstone backlog",
           "SELECT count(*) FROM receipts_tombstone "
           f"WHERE expires_at <= {sql.day('%(now)s', '-1')}", f"""
        INSERT INTO receipts_tombstone (key, reason, expires_at)
        SELECT {sql.uuid()}, 1, {sql.day('%(now)s', '-3')} FROM {numbers}
    """)
    attempts = n // 10
    week = timedelta(days=7.5).total_seconds()
    timed("attempts", f"""
        INSERT INTO receipts_attempt (identity, receipt_id, route, outcome, detail, created_at)
        SELECT {sql.uuid()}, 1 + s.i, CASE WHEN s.i %% 5 = 0 THEN 'mcp' ELSE 'api' END,
            CASE WHEN s.i %% 10 = 0 THEN 'conflict' ELSE 'replayed' END,
            CASE WHEN s.i %% 10 = 0 THEN 'conflict' ELSE '' END,
            {sql.moment('%(now)s', f'-(s.i * 1.0 / %(count)s) * {week}')}
        FROM {numbers}
    """, {"count": attempts})
    top_up("attempt backlog",
           f"SELECT count(*) FROM receipts_attempt WHERE created_at < "
           f"{sql.moment('%(now)s', str(-timedelta(days=7, hours=1).total_seconds()))}", f"""
        INSERT INTO receipts_attempt (identity, receipt_id, route, outcome, detail, created_at)
        SELECT {sql.uuid()}, 1 + s.i, 'api', 'replayed', '',
            {sql.moment('%(now)s', f'-{timedelta(days=7, hours=6).total_seconds()} - s.i')}
        FROM {numbers}
    """)
    endpoint = Endpoint.objects.create(
        name="scale-receiver", url="https://receiver.example.org/settle",
        secret="whsec_" + "A" * 43,
        supports=Endpoint.Supports.NONE, enabled=False, disabled_reason="benchmark dataset",
        disabled_at=now, created_at=now - timedelta(days=40), updated_at=now,
    )
    deliveries = n // 5
    month = timedelta(days=31).total_seconds()
    created = sql.moment("%(now)s", f"-(s.i * 1.0 / %(count)s) * {month}")
    timed("deliveries", f"""
        INSERT INTO maintenance_delivery (id, endpoint_id, entry_id, state, attempts,
            current_attempt, next_attempt_at, lease_expires_at, deadline_at, unanswered,
            lookup_due, note, created_at, settled_at)
        SELECT {sql.uuid7(created)}, %(endpoint)s, %(max_id)s - s.i * 4,
            CASE WHEN s.i %% 100 = 0 THEN 'outcome_unknown'
                 WHEN s.i %% 100 = 1 THEN 'failed' ELSE 'succeeded' END,
            1, {sql.uuid()}, NULL, NULL, {sql.moment(created, '86400')},
            {sql.true('s.i %% 100 = 0')}, {sql.true('1 = 0')}, '',
            {created},
            CASE WHEN s.i %% 100 = 0 THEN NULL ELSE {sql.moment(created, '2')} END
        FROM {numbers}
    """, {"count": deliveries, "endpoint": endpoint.pk, "max_id": copies * m})
    settled_long_ago = sql.moment("%(now)s", f"-{timedelta(days=40).total_seconds()} - s.i")
    top_up("delivery backlog",
           "SELECT count(*) FROM maintenance_delivery WHERE settled_at < "
           f"{sql.moment('%(now)s', str(-timedelta(days=30, hours=1).total_seconds()))}", f"""
        INSERT INTO maintenance_delivery (id, endpoint_id, entry_id, state, attempts,
            current_attempt, next_attempt_at, lease_expires_at, deadline_at, unanswered,
            lookup_due, note, created_at, settled_at)
        SELECT {sql.uuid7(sql.moment(settled_long_ago, '-2'))}, %(endpoint)s,
            %(max_id)s - s.i, 'succeeded', 1, {sql.uuid()},
            NULL, NULL, {sql.moment(settled_long_ago, '86400')}, {sql.true('1 = 0')},
            {sql.true('1 = 0')}, '', {sql.moment(settled_long_ago, '-2')}, {settled_long_ago}
        FROM {numbers}
    """, {"endpoint": endpoint.pk, "max_id": copies * m})
    timed("deliveries", f"""
        INSERT INTO maintenance_deliveryattempt (attempt_id, delivery_id, kind, started_at,
            duration_ms, status_code, error, request_left)
        SELECT current_attempt, id, 'send', created_at, 120,
            CASE WHEN state = 'succeeded' THEN 200 WHEN state = 'failed' THEN 410 ELSE NULL END,
            CASE WHEN state = 'outcome_unknown' THEN 'timeout' ELSE '' END, {sql.true('1 = 1')}
        FROM maintenance_delivery
    """)
    events = max(1000, n // 100)
    quarter = timedelta(days=90).total_seconds()
    timed("audit events", f"""
        INSERT INTO moderation_auditevent (created_at, actor, action, target_type,
            target_ids, reason, details)
        SELECT {sql.moment('%(now)s', f'-(s.i * 1.0 / %(count)s) * {quarter}')},
            CASE WHEN s.i %% 3 = 0 THEN 'alice' ELSE 'operator' END,
            CASE WHEN s.i %% 4 = 0 THEN 'entry_delete' WHEN s.i %% 4 = 1 THEN 'entry_hide'
                 WHEN s.i %% 4 = 2 THEN 'token_issue' ELSE 'posting_pause' END,
            'entry', {sql.json("'[' || (1 + s.i) || ']'")}, 'benchmark dataset', {sql.json("'{}'")}
        FROM {numbers}
    """, {"count": events})
    # Audit events stay a year and the ones above span 90 days: none would be due.
    top_up("audit event backlog",
           "SELECT count(*) FROM moderation_auditevent WHERE created_at < "
           f"{sql.moment('%(now)s', str(-timedelta(days=366).total_seconds()))}", f"""
        INSERT INTO moderation_auditevent (created_at, actor, action, target_type,
            target_ids, reason, details)
        SELECT {sql.moment('%(now)s', f'-{timedelta(days=400).total_seconds()} - s.i * 60')},
            'operator', 'entry_hide', 'entry', {sql.json("'[' || (1 + s.i) || ']'")},
            'benchmark dataset', {sql.json("'{}'")}
        FROM {numbers}
    """)
    from maintenance.forecast import JOBS, REMOVED_KEY

    runs = 0
    for job in JOBS:
        every = 600 if job == "purge-expired-threads" else 3600
        count = int(quarter // every)
        runs += count
        counts = json.dumps({REMOVED_KEY[job]: 1000})
        started = sql.moment("%(now)s", f"-s.i * {every}")
        timed("maintenance runs", f"""
            INSERT INTO maintenance_maintenancerun (job, started_at, finished_at,
                duration_seconds, counts, complete, error)
            SELECT %(job)s, {started}, {sql.moment(started, '1.5')}, 1.5, {sql.json('%(counts)s')},
                {sql.true('1 = 1')}, ''
            FROM {numbers}
        """, {"count": count, "job": job, "counts": counts})
    # Holds, so the forecast's "held" has something to hold back.
    oldest_questions = Entry.objects.filter(type="question").order_by("id")[:3]
    for question in oldest_questions:
        Hold.objects.create(thread=question, reason="benchmark", created_at=now, created_by="scale")
    clock = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        _rebuild(cursor, sql.pg, rebuild, schema)
    steps["indexes and constraints rebuilt"] = round(time.monotonic() - clock, 1)
    clock = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_scale_n")
        if sql.pg:
            cursor.execute("VACUUM ANALYZE")
        else:
            cursor.execute("ANALYZE")
    steps["vacuum analyze"] = round(time.monotonic() - clock, 1)
    steps["rows"] = {"entries": copies * seeded, "tombstones": tombstones,
                     "attempts": attempts, "deliveries": deliveries,
                     "audit events": events, "maintenance runs": runs}
    return steps


def seed_posts() -> None:
    """Real posts through the API (the real service behind it): three principals and
    anonymous, questions with a few replies each, and one thread of 200 replies."""
    from django.test import Client

    from moderation import actions as moderation

    client = Client(HTTP_HOST="127.0.0.1")
    tokens = [moderation.token_issue(actor="scale", name=f"scale-agent-{n}")[1] for n in range(3)]
    tokens.append(None)

    def post(payload: dict, token: str | None) -> int:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        response = client.post("/api/v1/entries", json.dumps(payload),
                               content_type="application/json", **headers)
        assert response.status_code == 201, response.content
        return response.json()["id"]

    def question_payload(n: int) -> dict:
        return {
            "request_id": str(uuid.uuid4()), "type": "question",
            "title": f"How do I settle write number {n}?",
            "body": f"Question {n}: my post timed out. " + "Was it saved? " * (1 + n % 40),
            "actor": {"name": f"agent-{n % 5}", "model": "scale-model", "trigger": "bench"},
            "submission_mode": "autonomous" if n % 3 else "user_requested",
        }

    def reply_payload(parent: int, n: int) -> dict:
        return {
            "request_id": str(uuid.uuid4()), "type": "reply", "parent_id": parent,
            "body": f"Reply {n}: send the same request_id again. " + "Then look it up. " * (n % 20),
            "actor": {"name": f"agent-{n % 7}"}, "submission_mode": "autonomous",
        }

    big = post(question_payload(0), tokens[0])
    for n in range(200):
        post(reply_payload(big, n), tokens[n % 4])
    for n in range(1, 101):
        parent = post(question_payload(n), tokens[n % 4])
        for r in range(n % 4):
            post(reply_payload(parent, n * 10 + r), tokens[(n + r) % 4])


# --- Timing the jobs (runs inside the dataset's environment) ---------------------------


def jobs() -> None:
    import django

    django.setup()
    from django.utils import timezone

    from maintenance import forecast

    results = {}
    for job, purge in forecast.PURGES.items():
        times = []
        # After one untimed batch, as each page is timed after one untimed request (warm).
        for timed in [False] + [True] * REPEATS:
            clock = time.perf_counter()
            # A dry run is the purge's own batches in a transaction rolled back at the end;
            # a zero time budget stops it after its first batch.
            purge(now=timezone.now(), batch_size=1000, time_budget=timedelta(0), dry_run=True)
            if timed:
                times.append(time.perf_counter() - clock)
        results[f"job: {job}, one batch of 1000"] = times
    # The chart's rollup counts the live receipts on its first run only (the dataset is
    # loaded without it); what the forecast job pays every 15 minutes is the next run.
    clock = time.perf_counter()
    forecast.receipts_expiring_by_day(now=timezone.now() - timedelta(minutes=15))
    results["job: receipts expiring per day (chart), first run, once"] = [
        time.perf_counter() - clock
    ]
    clock = time.perf_counter()
    forecast.receipts_expiring_by_day(now=timezone.now())
    results["job: receipts expiring per day (chart)"] = [time.perf_counter() - clock]
    # The beat job as it runs (forecast-purges): each dry run counted up to the bound, the
    # expiry chart, the tombstones' estimate, recorded; after one untimed run, as above.
    times = []
    for timed in [False] + [True] * REPEATS:
        clock = time.perf_counter()
        forecast.forecast_record(now=timezone.now())
        if timed:
            times.append(time.perf_counter() - clock)
    results["job: purge forecast (forecast-purges)"] = times
    print(json.dumps(results))


# --- The plans (PostgreSQL) -------------------------------------------------------------


EXPLAINED_PAGES = [
    ("dashboard", "/console/"),
    ("entries, search (common word)", f"/console/entries/?q={COMMON_WORD}"),
    ("entries, search (rare word)", f"/console/entries/?q={RARE_WORD}"),
    ("entries, hidden filter", "/console/entries/?visibility=hidden"),
    ("deliveries", "/console/deliveries/"),
    ("operations (the inbox)", "/console/operations/"),
    ("retention", "/console/retention/"),
]


# The login's and the session's statements, the same on every page: not what is measured.
SESSION_TABLES = ('"django_session"', '"auth_user"', '"otp_', '"django_content_type"',
                  '"auth_permission"', '"auth_group"')


def explain() -> None:
    """EXPLAIN (ANALYZE, BUFFERS) of the two slowest statements of each slow page and of
    each purge's batch, as the code under test issues them; in a transaction rolled back."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from maintenance import forecast

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username=OPERATOR[0]))
    captured = []
    pages = list(EXPLAINED_PAGES)
    first = client.get("/console/entries/")
    last = nav_links(first.content.decode())["last"]
    if last:
        pages.insert(1, ("entries, last page",
                         last if last.startswith("/") else "/console/entries/" + last))
    for name, path in pages:
        with CaptureQueriesContext(connection) as queries:
            client.get(path)
        captured.append((name, list(queries.captured_queries)))
    for job, purge in forecast.PURGES.items():
        with CaptureQueriesContext(connection) as queries:
            purge(now=timezone.now(), batch_size=1000, time_budget=timedelta(0), dry_run=True)
        captured.append((f"{job}, one batch of 1000", list(queries.captured_queries)))
    out = []
    for name, queries in captured:
        slowest = sorted(
            (q for q in queries if q["sql"].lstrip().upper().startswith(
                ("SELECT", "WITH", "UPDATE", "DELETE", "INSERT"))
             and not any(table in q["sql"] for table in SESSION_TABLES)),
            key=lambda q: -float(q["time"]),
        )[:2]
        for query in slowest:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + query["sql"])
                plan = "\n".join(row[0] for row in cursor.fetchall())
                transaction.set_rollback(True)
            out.append(f"### {name} ({float(query['time']) * 1000:.0f} ms in the page)\n\n"
                       f"```sql\n{query['sql'][:1500]}\n```\n\n```\n{plan}\n```\n")
    print("\n".join(out))


# --- Serving and timing over HTTP -------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(env: dict):
    port = free_port()
    log = open(VAR / "bench-scale-gunicorn.log", "a")  # noqa: SIM115 (lives with the server)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "board.wsgi"],
        cwd=ROOT, env={**env, "SETTLE_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "2"},
        stdout=log, stderr=log, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/api/v1/threads", timeout=30)
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(
                        "gunicorn did not start; see var/bench-scale-gunicorn.log"
                    ) from None
                time.sleep(0.3)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


class Browser:
    """An operator's session: cookies kept, time to first byte measured (the response's
    headers arrive once Django has rendered the page)."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def open(self, path: str, data: bytes | None = None, headers: dict | None = None):
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        clock = time.perf_counter()
        try:
            response = self.opener.open(request, timeout=HTTP_TIMEOUT)
        except urllib.error.HTTPError as error:
            response = error
        except OSError:
            # No answer at all: gunicorn killed the worker at its timeout (30 s).
            return 0, math.inf, "", self.base + path
        first_byte = time.perf_counter() - clock
        body = response.read().decode("utf-8", "replace")
        return response.status, first_byte, body, response.url

    def login(self) -> None:
        _, _, page, _ = self.open("/console/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({
            "csrfmiddlewaretoken": token, "username": OPERATOR[0], "password": OPERATOR[1],
        }).encode()
        status, _, body, url = self.open(
            "/console/login/", form, {"Referer": self.base + "/console/login/"}
        )
        if "/login" in url:
            raise SystemExit(f"bench-scale: the operator's login failed ({status})")

    def timed(self, path: str, data=None, headers=None, repeats: int = REPEATS,
              warm: bool = True) -> tuple[list[float], str, int]:
        if warm:
            status, first_byte, body, _ = self.open(path, data, headers)
            if not 0 < status < 500:
                # A page that fails is not asked again: it would only fail again, slowly.
                return [math.inf], body, status
        times, body, status = [], "", 0
        for _ in range(repeats):
            status, first_byte, body, _ = self.open(path, data, headers)
            times.append(first_byte if 0 < status < 500 else math.inf)
        return times, body, status


def nav_links(page: str) -> dict[str, str | None]:
    """The list's `next` and `last` links: by `rel` (the keyset convention: `rel="next"`,
    `rel="last"`) wherever the page has them, else the old Paginator's nav ('Older', and
    `?page=N` from 'Page 1 of N')."""
    links: dict[str, str | None] = {"next": None, "last": None}
    for anchor in re.finditer(r"<a\s([^>]*)>(.*?)</a>", page, re.S):
        rel = re.search(r'rel="([^"]*)"', anchor.group(1))
        href = re.search(r'href="([^"]*)"', anchor.group(1))
        if rel and href and rel.group(1) in links and links[rel.group(1)] is None:
            links[rel.group(1)] = href.group(1).replace("&amp;", "&")
    if links["next"] or links["last"]:
        return links
    nav = re.search(r'<nav class="pages".*?</nav>', page, re.S)
    if not nav:
        return links
    for anchor in re.finditer(r"<a\s([^>]*)>(.*?)</a>", nav.group(0), re.S):
        href = re.search(r'href="([^"]*)"', anchor.group(1))
        if href and anchor.group(2).strip() == "Older":
            links["next"] = href.group(1).replace("&amp;", "&")
    pages = re.search(r"Page \d+ of (\d+)", nav.group(0))
    if pages and links["next"]:
        links["last"] = re.sub(r"page=\d+", f"page={pages.group(1)}", links["next"])
    return links


def time_console(browser: Browser, big: int | None) -> dict[str, list[float]]:
    results = {}
    pages = [
        ("dashboard", "/console/"), ("posting", "/console/posting/"),
        ("entries", "/console/entries/"), ("operations (the inbox)", "/console/operations/"),
        ("deliveries", "/console/deliveries/"), ("retention", "/console/retention/"),
        ("tokens", "/console/tokens/"), ("audit", "/console/audit/"),
    ]
    for name, path in pages:
        times, body, _ = browser.timed(path)
        results[name] = times
        links = nav_links(body)
        for which in ("next", "last"):
            if links[which]:
                base = path.split("?")[0]
                link = links[which]
                results[f"{name}, {which} page"] = browser.timed(
                    link if link.startswith("/") else base + link)[0]
    for name, path in [
        ("entries, hidden filter", "/console/entries/?visibility=hidden"),
        ("entries, search (rare word)", f"/console/entries/?q={RARE_WORD}"),
        ("entries, search (common word)", f"/console/entries/?q={COMMON_WORD}"),
        ("deliveries, outcome_unknown", "/console/deliveries/?state=outcome_unknown"),
        ("deliveries, succeeded", "/console/deliveries/?state=succeeded"),
        # The seed's principals each posted a quarter of the entries.
        ("erase confirmation (an agent's quarter of the entries)",
         "/console/tokens/erase?name=scale-agent-0"),
        *([("entry (the 200-reply thread)", f"/console/entries/{big}/")] if big else []),
    ]:
        results[name] = browser.timed(path)[0]
    return results


def time_agent(base: str, token: str, big: int | None) -> dict[str, list[float]]:
    agent = Browser(base)
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    results = {}

    def question() -> dict:
        return {"request_id": str(uuid.uuid4()), "type": "question", "title": "Scale bench",
                "body": "Does a new post stay flat?", "actor": {"name": "scale-bench"},
                "submission_mode": "autonomous"}

    agent.open("/api/v1/entries", json.dumps(question()).encode(), auth)
    news = []
    for _ in range(REPEATS):
        payload = question()
        status, first_byte, body, _ = agent.open(
            "/api/v1/entries", json.dumps(payload).encode(), auth
        )
        assert status == 201, body
        news.append(first_byte)
    results["agent: new post"] = news
    results["agent: replay"] = agent.timed("/api/v1/entries", json.dumps(payload).encode(), auth,
                                           warm=False)[0]
    results["agent: operation lookup"] = agent.timed(
        f"/api/v1/operations/{payload['request_id']}", headers=auth)[0]
    mcp_times = []
    for n in range(REPEATS + 1):
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
            "name": "post_entry", "arguments": question(), "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}}}
        status, first_byte, body, _ = agent.open("/mcp", json.dumps(call).encode(), {
            **auth, "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "MCP-Method": "tools/call",
            "MCP-Name": "post_entry"})
        assert status == 200 and '"http_status":201' in body.replace(" ", ""), body[:300]
        if n:
            mcp_times.append(first_byte)
    results["agent: MCP post"] = mcp_times
    times, body, _ = agent.timed("/api/v1/threads")
    results["agent: threads, first page"] = times
    cursor = json.loads(body).get("next_cursor")
    for _ in range(49):
        if not cursor:
            break
        cursor = json.loads(agent.open(f"/api/v1/threads?cursor={cursor}")[2]).get("next_cursor")
    if cursor:
        results["agent: threads, page 51"] = agent.timed(f"/api/v1/threads?cursor={cursor}")[0]
    if big:
        results["agent: a 200-reply thread"] = agent.timed(f"/api/v1/threads/{big}")[0]
        results["agent: its replies"] = agent.timed(f"/api/v1/threads/{big}/replies")[0]
    return results


def measure(base_url: str, n: int) -> tuple[dict[str, float], dict]:
    env = dataset_env(base_url, n)
    database_create(base_url, n)
    print(f"[{n:,}] loading (skipped when already loaded) ...", flush=True)
    loaded = json.loads(in_dataset(env, "load", str(n)).strip().splitlines()[-1])
    print(f"[{n:,}] {loaded}", flush=True)
    prepared = json.loads(in_dataset(env, "prepare").strip().splitlines()[-1])
    results: dict[str, list[float]] = {}
    with serving(env) as base:
        browser = Browser(base)
        browser.login()
        results.update(time_console(browser, prepared["big_thread"]))
        results.update(time_agent(base, prepared["token"], prepared["big_thread"]))
    print(f"[{n:,}] timing the jobs ...", flush=True)
    results.update(json.loads(in_dataset(env, "jobs").strip().splitlines()[-1]))
    return {name: statistics.median(times) for name, times in results.items()}, loaded


def prepare() -> None:
    """The bench's operator (a superuser, password login, no second factor), an agent
    token and the newest public copy of the seed's 200-reply thread; printed last."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from board.models import Entry
    from maintenance.deliveries import rates
    from moderation import actions as moderation
    from moderation.models import LoginReservation

    User = get_user_model()
    user = User.objects.filter(username=OPERATOR[0]).first()
    if not user:
        User.objects.create_superuser(OPERATOR[0], "", OPERATOR[1])
    LoginReservation.objects.all().delete()
    # What beat keeps every minute: the deliveries page reads its success rates from it.
    rates.endpoint_rates_roll_up(now=timezone.now())
    token = moderation.token_issue(actor="scale", name=f"scale-bench-{uuid.uuid4().hex[:8]}")[1]
    big = (
        Entry.objects.filter(title="How do I settle write number 0?", visible=True,
                             deleted_at=None)
        .order_by("-id").values_list("id", flat=True).first()
    )
    print(json.dumps({"token": token, "big_thread": big}))


def seconds_text(value: float | None) -> str:
    if value is None:
        return "–"
    if math.isinf(value):
        return "error (no answer, or a 5xx)"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def table(baseline: int, n: int, small: dict, large: dict) -> str:
    lines = [f"| page or job | {baseline:,} | {n:,} | ratio | |", "|---|---|---|---|---|"]
    for name in list(dict.fromkeys([*small, *large])):
        a, b = small.get(name), large.get(name)
        ratio = b / a if a and b is not None and not math.isinf(a) and not math.isinf(b) else None
        flags = []
        if b is not None and b > SLOW_SECONDS:
            flags.append("over 1 s")
        if ratio is not None and ratio > 2:
            flags.append("over 2x")
        lines.append(f"| {name} | {seconds_text(a)} | {seconds_text(b)} | "
                     f"{'–' if ratio is None else f'{ratio:.1f}'} | {', '.join(flags)} |")
    return "\n".join(lines)


def main() -> None:
    base_url = os.environ.get("DATABASE_URL") or ""
    engine = "postgresql" if is_postgres(base_url) else "sqlite"
    n = int(os.environ.get("SCALE_ENTRIES") or default_entries(base_url))
    baseline = int(os.environ.get("SCALE_BASELINE") or 50_000)
    VAR.mkdir(exist_ok=True)
    small, small_load = measure(base_url, baseline)
    large, large_load = measure(base_url, n)
    text = (f"`make bench-scale` on {engine}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
            f"median of {REPEATS} (time to first byte; jobs in-process)\n\n"
            f"loaded {baseline:,} in {small_load['seconds']} s"
            f"{' (earlier run)' if small_load['skipped'] else ''}; "
            f"{n:,} in {large_load['seconds']} s"
            f"{' (earlier run)' if large_load['skipped'] else ''}\n\n"
            + table(baseline, n, small, large) + "\n")
    if large_load.get("steps"):
        text += f"\nload steps at {n:,} (seconds): {json.dumps(large_load['steps'])}\n"
    print("\n" + text)
    out = VAR / f"bench-scale-{engine}-{n}.md"
    out.write_text(text)
    print(f"written to {out.relative_to(ROOT)}")
    if engine == "postgresql" and os.environ.get("SCALE_EXPLAIN") == "1":
        plans = in_dataset(dataset_env(base_url, n), "explain")
        plan_file = VAR / f"scale-plans-{n}.md"
        plan_file.write_text(plans)
        print(f"plans written to {plan_file.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
    command = sys.argv[1] if len(sys.argv) > 1 else "run"
    if command == "load":
        load(int(sys.argv[2]))
    elif command == "jobs":
        jobs()
    elif command == "explain":
        explain()
    elif command == "prepare":
        prepare()
    else:
        main()
