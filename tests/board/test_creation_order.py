"""The first entry since a moment, by halving the id range (board/selectors.py):
the same answer as ordering the entries by `created_at`, read by the primary key only."""

import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from board.models import Entry
from board.selectors import (
    FIRST_ENTRY_SINCE_SQL,
    created_between,
    first_entry_id_since,
)
from receipts.function_file import statement_file
from tests.conftest import is_postgres
from tests.seeding import entries_at

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def a_board_with_gaps(count: int, *, seed: int) -> list[tuple[int, datetime]]:
    """Ids that skip (a purge, a rolled-back post) and times that grow, some equal."""
    chance = random.Random(seed)
    pk, moment, rows = chance.randint(1, 50), START, []
    for _ in range(count):
        rows.append((pk, moment))
        pk += chance.choice([1, 1, 1, 2, 7, 300])
        moment += timedelta(seconds=chance.choice([0, 1, 1, 30, 3_600]))
    entries_at([pk for pk, _ in rows], [moment for _, moment in rows])
    return rows


def by_creation_time(moment: datetime) -> int | None:
    return (
        Entry.objects.filter(created_at__gte=moment)
        .order_by("created_at", "id").values_list("id", flat=True).first()
    )


def test_it_finds_what_ordering_by_creation_time_finds_over_gaps_in_the_ids():
    rows = a_board_with_gaps(400, seed=41)
    moments = {START - timedelta(days=1), rows[-1][1] + timedelta(microseconds=1)}
    for _, moment in rows:
        moments.update({moment, moment - timedelta(microseconds=1), moment + timedelta(seconds=1)})

    found = {moment: first_entry_id_since(moment) for moment in sorted(moments)}

    assert found == {moment: by_creation_time(moment) for moment in sorted(moments)}
    assert found[START - timedelta(days=1)] == rows[0][0]
    assert found[rows[-1][1] + timedelta(microseconds=1)] is None


def test_it_takes_an_entry_made_exactly_at_the_moment_in_any_offset():
    entries_at([5, 9], [START, START + timedelta(hours=1)])
    in_new_york = (START + timedelta(hours=1)).astimezone(
        datetime(2026, 3, 1, tzinfo=UTC).astimezone().tzinfo
    )

    assert first_entry_id_since(START) == 5
    assert first_entry_id_since(in_new_york) == 9


def test_it_finds_nothing_on_an_empty_board():
    assert first_entry_id_since(START) is None


def test_one_entry_is_found_or_not():
    entries_at([7], [START])

    assert first_entry_id_since(START - timedelta(seconds=1)) == 7
    assert first_entry_id_since(START + timedelta(seconds=1)) is None


@pytest.mark.skipif(not is_postgres(), reason="the plan is PostgreSQL's")
def test_it_reads_a_few_entries_by_the_primary_key_whatever_the_board_holds():
    # given: 20,000 entries whose ids span about 40,000
    rows = a_board_with_gaps(20_000, seed=7)
    span = rows[-1][0] - rows[0][0]
    moment = rows[12_345][1]
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE "{Entry._meta.db_table}"')
        # when
        cursor.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
            + statement_file(FIRST_ENTRY_SINCE_SQL),
            {"moment": moment},
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())

    # then: no scan of the table, and one descent of the primary key a halving
    assert "Seq Scan" not in plan and "Bitmap" not in plan, plan
    probes = sum(
        int(line.rsplit("loops=", 1)[1].rstrip(")"))
        for line in plan.splitlines()
        if "Index Scan using board_entry_pkey" in line and "loops=" in line
    )
    assert 0 < probes <= math.ceil(math.log2(span)) + 4, plan
    assert first_entry_id_since(moment) == by_creation_time(moment)


@pytest.mark.skipif(is_postgres(), reason="the plan is SQLite's")
def test_sqlite_reads_it_by_the_primary_key():
    entries_at([3, 4, 90], [START, START, START + timedelta(hours=1)])
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN QUERY PLAN " + statement_file(FIRST_ENTRY_SINCE_SQL),
            {"moment": connection.ops.adapt_datetimefield_value(START)},
        )
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())

    assert "SCAN board_entry" not in plan, plan
    assert "SEARCH board_entry USING INTEGER PRIMARY KEY" in plan, plan


def created_between_ids(since: datetime | None, before: datetime | None) -> set[int]:
    return set(Entry.objects.filter(created_between(since, before)).values_list("id", flat=True))


def exactly_between(since: datetime | None, before: datetime | None) -> set[int]:
    entries = Entry.objects.all()
    if since is not None:
        entries = entries.filter(created_at__gte=since)
    if before is not None:
        entries = entries.filter(created_at__lt=before)
    return set(entries.values_list("id", flat=True))


def test_a_span_holds_exactly_its_entries_when_ids_and_times_disagree():
    """Times chosen at random for every id (rows written with chosen times): the halving
    lands anywhere, and the ends' neighbours still bring in every entry of the span."""
    chance = random.Random(7)
    ids = sorted(chance.sample(range(1, 2_000), 300))
    moments = [START + timedelta(minutes=chance.randint(0, 60 * 24 * 10)) for _ in ids]
    entries_at(ids, moments)
    ends = [None, *(START + timedelta(hours=chance.randint(-12, 250)) for _ in range(20))]

    for since in ends:
        for before in ends:
            assert created_between_ids(since, before) == exactly_between(since, before)


def test_an_entry_older_than_its_id_does_not_hide_the_newer_ones_below_it():
    entries_at([1, 2], [START, START - timedelta(days=3)])

    assert created_between_ids(START - timedelta(days=2), None) == {1}
    assert created_between_ids(START - timedelta(days=4), START - timedelta(days=2)) == {2}
