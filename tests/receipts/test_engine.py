"""The idempotency engine on its own, through the calls production makes (board.services
.entry_post): a replay of a seen receipt, a claim, and the claim refused or fulfilled.
It knows nothing of posting rules, only of identities, digests and an effect's row."""

import uuid
from datetime import UTC, date, datetime, time, timedelta
from datetime import timezone as timezone_of

import pytest
from django.utils import timezone

from board.exceptions import ParentUnavailable
from board.models import Entry
from maintenance.tombstones.purge import tombstones_purge
from receipts import services
from receipts.exceptions import RequestConflict, RequestDeleted, RequestExpired
from receipts.fingerprint import Identity, differing_fields
from receipts.models import Attempt, Receipt, Tombstone

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def identity(scope: str = "scope-a") -> services.Identity:
    return services.Identity(scope=scope, operation="thing:v1", request_id=uuid.uuid4())


def effect(title: str, now) -> services.Effect:
    """One row, as the board hands the engine an entry."""
    return services.Effect(model=Entry, values={
        "type": Entry.Type.QUESTION, "parent_id": None, "title": title, "body": "b",
        "actor_name": "engine-test", "actor_model": "", "actor_trigger": "",
        "submission_mode": Entry.SubmissionMode.AUTONOMOUS, "visible": True,
        "deleted_at": None, "route": "api", "source": "ip:127.0.0.1", "principal_id": None,
        "created_at": now,
    })


def execute(who: services.Identity, fields: dict, *, now=None, title="made", refusal=None):
    """What entry_post does with the engine: replay if seen, else claim and write (or
    refuse with `refusal`), and replay a claim lost to a committed receipt."""
    now = now or timezone.now()
    asked = {"identity": who, "content": fields, "route": "api", "now": now}
    seen = Receipt.objects.filter(scope=who.scope, request_id=who.request_id).exists()
    settled = services.receipt_replay(**asked, model=Entry) if seen else None
    if settled is None:
        settled = services.receipt_write(
            **asked, retention=DAY, effect=effect(title, now), refusal=refusal
        )
    if settled is None:
        settled = services.receipt_replay(**asked, model=Entry, after_lost_claim=True)
    return settled


def test_it_runs_the_effect_once_and_replays_after():
    who = identity()

    first = execute(who, {"a": 1}, title="first")
    second = execute(who, {"a": 1}, title="second")

    assert list(Entry.objects.values_list("title", flat=True)) == ["first"]
    assert (first.replayed, second.replayed) == (False, True)
    assert second.receipt.result_id == first.result.pk
    assert second.result.pk == first.result.pk
    assert Receipt.objects.get().attempts == 2


def test_it_names_the_fields_that_differ():
    who = identity()
    execute(who, {"a": 1, "b": 2, "c": 3})

    with pytest.raises(RequestConflict) as refused:
        execute(who, {"a": 1, "b": 5, "c": 4})

    assert refused.value.conflicting_fields == ["b", "c"]
    assert Attempt.objects.filter(outcome="conflict").count() == 1


def test_a_receipt_is_last_seen_at_its_first_attempt_until_a_retry():
    who, now = identity(), timezone.now()
    execute(who, {"a": 1}, now=now)
    made = Receipt.objects.get()

    execute(who, {"a": 1}, now=now + timedelta(seconds=5))
    retried = Receipt.objects.get()

    assert (made.last_seen_at, made.last_seen) == (None, now)
    assert retried.last_seen_at == retried.last_seen == now + timedelta(seconds=5)
    assert retried.first_seen_at == now


def test_it_rolls_the_claim_back_when_the_write_is_refused():
    who = identity()

    with pytest.raises(ParentUnavailable):
        execute(who, {"a": 1}, refusal=ParentUnavailable())

    assert Receipt.objects.count() == 0
    assert Attempt.objects.get().detail == "parent_unavailable"
    assert execute(who, {"a": 1}).replayed is False


def test_a_tombstone_answers_before_the_callers_refusal():
    who, now = identity(), timezone.now()
    Tombstone.objects.create(key=who.key, reason=Tombstone.Reason.DELETED, expires_at=now + DAY)

    with pytest.raises(RequestDeleted):
        execute(who, {"a": 1}, now=now, refusal=ParentUnavailable())


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


@pytest.mark.parametrize(
    "zone", [UTC, timezone_of(timedelta(hours=14)), timezone_of(-timedelta(hours=12))]
)
@pytest.mark.parametrize(("micros", "in_force"), [(-1, True), (0, False)])
def test_the_write_the_lookup_and_the_purge_agree_on_a_tombstones_last_moment(
    zone, micros, in_force
):
    # A tombstone expiring on a day is in force until that day's midnight UTC, whatever
    # offset `now` is written in: the write's statement, the ORM's lookup and the purge.
    who, day = identity(), date(2031, 3, 10)
    now = (datetime.combine(day, time(), UTC) + timedelta(microseconds=micros)).astimezone(zone)
    Tombstone.objects.create(key=who.key, reason=Tombstone.Reason.DELETED, expires_at=day)

    looked_up = services.tombstone_lookup(identity=who, now=now) is not None
    try:
        execute(who, {"a": 1}, now=now)
        refused = False
    except RequestDeleted:
        refused = True
    purged = tombstones_purge(now=now, limit=10)

    assert (looked_up, refused, purged) == (in_force, in_force, 0 if in_force else 1)


def test_it_answers_expired_from_the_receipts_expiry_on():
    who, now = identity(), timezone.now()
    execute(who, {"a": 1}, now=now)

    with pytest.raises(RequestExpired):
        execute(who, {"a": 1}, now=now + DAY)


def test_identity_keys_are_16_bytes_and_separate_scopes_and_operations():
    request_id = uuid.uuid4()
    keys = {
        Identity(scope, operation, request_id).key
        for scope in ("a", "b")
        for operation in ("post_entry:v1", "post_entry:v2")
    }

    assert len(keys) == 4
    assert all(len(key.bytes) == 16 for key in keys)


def test_differing_fields_include_fields_present_on_one_side_only():
    assert differing_fields({"a": "1"}, {"a": "1", "b": "2"}) == ["b"]
