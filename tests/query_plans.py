"""The plans of the statements a request sends, as the database would run them when
prepared: what a page's plan test reads (SPEC 11.7: a page costs the same whatever the
board holds)."""

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.db import connection, transaction


@contextmanager
def statements_sent() -> Iterator[list[tuple[str, tuple]]]:
    """Each statement the code sends, with its parameters unbound (Django's captured
    queries have them written in, which hides what a prepared plan cannot see)."""
    sent = []

    def record(execute, sql, params, many, context):
        sent.append((sql, tuple(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield sent


def plan_prepared(sql: str, params: tuple) -> str:
    """The statement's plan, its parameters bound. On PostgreSQL the generic plan, made
    once for every value: what a statement prepared by server-side binding (psycopg, on
    its fifth run on a connection) may run with from its sixth execution on
    (plan_cache_mode `auto` chooses it when it looks no dearer), so an index it needs
    must serve every value. (EXPLAIN of the statement with its parameters bound plans
    with their values, as a custom plan would.) On SQLite, EXPLAIN QUERY PLAN with the
    same parameters bound (its rows' details, one a line)."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
            return "\n".join(row[-1] for row in cursor.fetchall())
    # PREPARE by hand, its placeholders numbered and their types left to the statement
    # (as a column's), and all in one transaction: a pooler in transaction mode
    # (PgBouncer) keeps one server connection from BEGIN to COMMIT, and a statement
    # prepared on one server connection is not on the next.
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub(r"%%|%s", lambda m: "%" if m[0] == "%%" else f"${next(numbered)}", sql)
    name = f"settle_plan_probe_{uuid.uuid4().hex}"  # a failed probe leaves its own behind
    with transaction.atomic(), psycopg.ClientCursor(connection.connection) as cursor:
        cursor.execute(f"PREPARE {name} AS {prepared}")  # no parameters: sent as written
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        arguments = f"({', '.join(['%s'] * len(params))})" if params else ""
        cursor.execute(f"EXPLAIN EXECUTE {name}{arguments}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(f"DEALLOCATE {name}")
    return plan


def analyzed() -> None:
    """Fresh statistics, as autovacuum keeps them on a running board."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
