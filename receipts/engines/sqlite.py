"""The idempotency engine on SQLite: the rules of receipts/services.py run in Python
through the ORM, chosen in receipts/engines/__init__.py.

Nothing here locks or claims: every transaction is `BEGIN IMMEDIATE` (the database's
`transaction_mode`, board/settings.py), so it holds SQLite's one write lock from its
first statement, and SQLite's busy timeout bounds the wait for it. Inside that
transaction a read followed by a write is as safe as PostgreSQL's `ON CONFLICT` claim:
no other writer runs between them.
"""

from datetime import UTC

from django.db import DatabaseError, transaction
from django.db.models import F

from receipts.faults import Fault
from receipts.models import Attempt, Receipt, Tombstone
from receipts.statements import outcome_detail


def write(receipt, identity, effect, route, now, unrefused, guard):
    """The claim and the write in one immediate transaction. The same answers as
    PostgreSQL's one round trip (receipts/engines/postgresql.py `write`): None when the
    identity already has a receipt; else the receipt, the new row (None when refused),
    the tombstone's reason and the rows each companion wrote. A refused write writes
    nothing."""
    committing = False
    try:
        with transaction.atomic():
            if Receipt.objects.filter(
                scope=identity.scope, operation=identity.operation,
                request_id=identity.request_id,
            ).exists():
                return None
            # Slices, not .first(): its ORDER BY costs the ORM more than the query costs SQLite.
            tombstone = next(iter(
                Tombstone.objects.filter(
                    key=identity.key, expires_at__gt=now.astimezone(UTC).date()
                ).values_list("reason", flat=True)[:1]
            ), None)
            if tombstone is None and unrefused and guard is not None:
                unrefused = guard.holds()
            if tombstone is not None or not unrefused:
                return receipt, None, tombstone, []
            result = effect.model(**effect.values)
            result.save(force_insert=True)
            receipt.result_id = result.pk
            receipt.save(force_insert=True)
            Attempt.objects.create(
                identity=identity.key, receipt_id=receipt.pk, route=route,
                outcome=Attempt.Outcome.CREATED, detail="", created_at=now,
            )
            returned = []
            for companion in effect.companions:
                returned.append(companion.write(result.pk))
            committing = True  # what fails from here on is COMMIT
    except DatabaseError as error:
        raise Fault(error, on_identity=False, committing=committing) from None
    return receipt, result, None, returned


def replay(identity, digests, route, now, model, judge):
    """The receipt counted and its attempt logged, in one immediate transaction, so
    nobody changes the receipt or the effect between this read and the answer; None
    when the receipt is gone (purged)."""
    with transaction.atomic():
        receipt = next(iter(_receipts(identity)[:1]), None)
        if receipt is None:
            return None
        _receipts(identity).update(attempts=F("attempts") + 1, last_seen_at=now)
        receipt.attempts += 1
        receipt.last_seen_at = now
        verdict = judge(receipt)
        outcome = Attempt.Outcome.REPLAYED if verdict is None else verdict.code
        Attempt.objects.create(
            identity=identity.key, receipt_id=receipt.pk, route=route, outcome=outcome,
            detail=outcome_detail(outcome), created_at=now,
        )
        result = None
        if model is not None and receipt.result_id is not None:
            result = next(iter(model._default_manager.filter(pk=receipt.result_id)[:1]), None)
        return receipt, result


def _receipts(identity):
    return Receipt.objects.filter(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id
    )
