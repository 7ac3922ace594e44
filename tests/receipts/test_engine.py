"""The idempotency engine on its own: it knows nothing of entries, only of identities,
digests and an effect to run once."""

import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from receipts import services
from receipts.exceptions import RequestConflict, RequestDeleted, RequestExpired
from receipts.fingerprint import differing_fields, field_digests, identity_key
from receipts.models import Attempt, Receipt, Tombstone

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def identity(scope: str = "scope-a") -> services.Identity:
    return services.Identity(scope=scope, operation="thing:v1", request_id=uuid.uuid4())


def execute(who: services.Identity, fields: dict, *, now=None, effect=lambda: 42):
    """Run the engine with an effect that stands for any saved row: it only has an id."""
    return services.receipt_execute(
        identity=who,
        digests=field_digests(fields),
        route="api",
        now=now or timezone.now(),
        retention=DAY,
        perform=lambda: SimpleNamespace(pk=effect()),
        load=lambda result_id: SimpleNamespace(pk=result_id),
    )


def test_it_runs_the_effect_once_and_replays_after():
    who, calls = identity(), []

    first = execute(who, {"a": 1}, effect=lambda: calls.append(1) or 7)
    second = execute(who, {"a": 1}, effect=lambda: calls.append(1) or 8)

    assert calls == [1]
    assert (first.replayed, second.replayed) == (False, True)
    assert second.receipt.result_id == 7
    assert second.result.pk == 7
    assert Receipt.objects.get().attempts == 2


def test_it_names_the_fields_that_differ():
    who = identity()
    execute(who, {"a": 1, "b": 2, "c": 3})

    with pytest.raises(RequestConflict) as refused:
        execute(who, {"a": 1, "b": 5, "c": 4})

    assert refused.value.conflicting_fields == ["b", "c"]
    assert Attempt.objects.filter(outcome="conflict").count() == 1


def test_it_rolls_the_claim_back_when_the_effect_refuses():
    who = identity()

    with pytest.raises(ZeroDivisionError):
        execute(who, {"a": 1}, effect=lambda: 1 / 0)

    assert Receipt.objects.count() == 0
    assert execute(who, {"a": 1}).replayed is False


def test_it_refuses_an_identity_that_left_a_tombstone():
    who, now = identity(), timezone.now()
    Tombstone.objects.create(key=who.key, reason=Tombstone.Reason.EXPIRED, expires_at=now + DAY)

    with pytest.raises(RequestExpired):
        execute(who, {"a": 1}, now=now)

    assert Receipt.objects.count() == 0


def test_it_refuses_an_identity_whose_deletion_left_a_tombstone():
    who, now = identity(), timezone.now()
    Tombstone.objects.create(key=who.key, reason=Tombstone.Reason.DELETED, expires_at=now + DAY)

    with pytest.raises(RequestDeleted):
        execute(who, {"a": 1}, now=now)


def test_it_forgets_a_tombstone_past_its_own_expiry():
    who, now = identity(), timezone.now()
    Tombstone.objects.create(key=who.key, reason=Tombstone.Reason.EXPIRED, expires_at=now)

    assert execute(who, {"a": 1}, now=now).replayed is False


def test_it_answers_expired_from_the_receipts_expiry_on():
    who, now = identity(), timezone.now()
    execute(who, {"a": 1}, now=now)

    with pytest.raises(RequestExpired):
        execute(who, {"a": 1}, now=now + DAY)


def test_identity_keys_are_16_bytes_and_separate_scopes_and_operations():
    request_id = uuid.uuid4()
    keys = {
        identity_key(scope=scope, operation=operation, request_id=request_id)
        for scope in ("a", "b")
        for operation in ("post_entry:v1", "post_entry:v2")
    }

    assert len(keys) == 4
    assert all(len(key.bytes) == 16 for key in keys)


def test_differing_fields_include_fields_present_on_one_side_only():
    assert differing_fields({"a": "1"}, {"a": "1", "b": "2"}) == ["b"]
