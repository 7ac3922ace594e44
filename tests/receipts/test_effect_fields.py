"""The engines write an effect's row and read it back with statements of their own, not
the ORM's (receipts/engines/). Every field is written and read as the ORM would, by the
field's own adaptation and Django's converters (receipts/statements.py), so a field
added to the entry needs no code in either engine: these tests fail when one does."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from board.models import Entry
from maintenance.models import MaintenanceRun
from receipts import services
from receipts.fingerprint import Identity
from receipts.models import Attempt

pytestmark = pytest.mark.django_db

# A value of each field type the entry has. A field of a new type fails the first test
# until it has a value here, and the round trip below then proves the engines take it.
SAMPLES = {
    "CharField": lambda field: field.choices[0][0] if field.choices else "Zoë ✓",
    "TextField": lambda field: "a body\nwith 'quotes' and ünïcode",
    "BooleanField": lambda field: not field.default,
    "DateTimeField": lambda field: datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC),
    "ForeignKey": lambda field: None,
}
NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def entry_values() -> dict:
    values = {}
    for field in Entry._meta.concrete_fields:
        if field.primary_key:
            continue
        kind = field.get_internal_type()
        assert kind in SAMPLES, f"Entry.{field.name} is a {kind}: give it a sample value"
        values[field.attname] = SAMPLES[kind](field)
    return values


def written_and_replayed(model, values: dict):
    who = Identity(scope="fields", operation="fields:v1", request_id=uuid.uuid4())
    asked = {"identity": who, "content": {"n": 1}, "route": "api", "now": NOW}
    made = services.receipt_write(
        **asked, retention=timedelta(days=1),
        effect=services.Effect(model=model, values=values),
    )
    replayed = services.receipt_replay(**asked, model=model)
    return made.result.pk, replayed.result


def same_fields(model, one, other) -> dict:
    return {
        f.attname: (getattr(one, f.attname), getattr(other, f.attname))
        for f in model._meta.concrete_fields
        if getattr(one, f.attname) != getattr(other, f.attname)
    }


def test_every_entry_field_is_written_as_given_and_replayed_as_the_orm_reads_it():
    values = entry_values()

    pk, replayed = written_and_replayed(Entry, values)

    stored = Entry.objects.get(pk=pk)
    assert {name: getattr(stored, name) for name in values} == values
    assert same_fields(Entry, replayed, stored) == {}


# Field types no entry field has, on models of ours with an id of their own sequence (an
# effect's id is its receipt's id too, so a receipt cannot be its own effect).
OTHER_TYPES = {
    "JSON and float": (MaintenanceRun, {
        "job": "fields", "started_at": NOW, "finished_at": NOW, "duration_seconds": 1.25,
        "counts": {"receipts": 3, "tags": ["x", "y"]}, "complete": False, "error": "",
    }),
    "UUID and big integer": (Attempt, {
        "identity": uuid.uuid4(), "receipt_id": 2**40, "route": "mcp",
        "outcome": "refused", "detail": "parent_unavailable", "created_at": NOW,
    }),
}


@pytest.mark.parametrize("model, values", OTHER_TYPES.values(), ids=OTHER_TYPES.keys())
def test_a_field_type_the_entry_does_not_have_yet_round_trips_too(model, values):
    pk, replayed = written_and_replayed(model, values)

    stored = model.objects.get(pk=pk)
    assert {name: getattr(stored, name) for name in values} == values
    assert same_fields(model, replayed, stored) == {}
