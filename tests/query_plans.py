"""The plans of the statements a request sends, as the database would run them when
prepared: what a page's plan test reads (SPEC 11.7: a page costs the same whatever the
board holds)."""

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.db import connection


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
    connection.ensure_connection()
    raw = connection.connection
    # Prepared by psycopg as Django's server-side binding prepares it, parameter types
    # and all (and run once: the statements are reads).
    with psycopg.Cursor(raw) as cursor:
        cursor.execute(sql, params, prepare=True)
        cursor.execute("SELECT name, array_length(parameter_types, 1)"
                       " FROM pg_prepared_statements ORDER BY prepare_time DESC LIMIT 1")
        name, count = cursor.fetchone()
    assert count == len(params) or (count is None and not params), (sql, params)
    with psycopg.ClientCursor(raw) as cursor:  # the arguments written in: EXECUTE's own
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        try:
            arguments = f"({', '.join(['%s'] * len(params))})" if params else ""
            cursor.execute(f'EXPLAIN EXECUTE "{name}"{arguments}', params)
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET plan_cache_mode")


def analyzed() -> None:
    """Fresh statistics, as autovacuum keeps them on a running board."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
