"""The one translation of database faults into what a write can truthfully say.

An error before COMMIT was sent means nothing was saved (`not_committed`); an error from
COMMIT itself means nothing can be told (`unknown`); a claim that waited past its bound
for another attempt of the same identity is `in_progress`. Everything the write path
catches from the database passes through `fault_answer`; the routes' one mapping
(board.exceptions.error_answer) turns the result into HTTP and MCP answers.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError

from receipts.exceptions import OutcomeUnavailable, ReceiptError, RequestInProgress

log = logging.getLogger(__name__)

LOCK_NOT_AVAILABLE = "55P03"


class Fault(Exception):
    """A database error an engine's write met, and where: `on_identity` when it came
    from the claim (so a wait past the bound was a wait for another attempt of the same
    identity), `committing` when the commit may have happened."""

    def __init__(self, error: DatabaseError, *, on_identity: bool, committing: bool) -> None:
        super().__init__(str(error))
        self.error, self.on_identity, self.committing = error, on_identity, committing


def sqlstate(error: BaseException) -> str | None:
    cause = error.__cause__ or error
    return getattr(cause, "sqlstate", None) or getattr(cause, "sqlite_errorname", None)


def fault_answer(
    error: DatabaseError,
    *,
    on_identity: bool = False,
    committing: bool = False,
    what: str = "write",
) -> ReceiptError:
    """What a database fault means for the write that met it. `on_identity`: it came
    from the statement that locks the identity's receipt (the claim, a replay), so a
    wait past the bound was a wait for another attempt of it. `committing`: it came from
    COMMIT, so the write may have been saved."""
    if on_identity and sqlstate(error) == LOCK_NOT_AVAILABLE:
        # Another attempt (or a delete, or a purge) held the identity past the bound.
        return RequestInProgress()
    outcome = OutcomeUnavailable.UNKNOWN if committing else OutcomeUnavailable.NOT_COMMITTED
    log.warning(
        "%s failed with %s (sqlstate %s); outcome %s",
        what, type(error).__name__, sqlstate(error), outcome,
    )
    return OutcomeUnavailable(outcome=outcome)


@contextmanager
def nothing_saved_if_failed(what: str = "post before its claim") -> Iterator[None]:
    """Around what a write runs before its claim: a database error there means nothing
    of the write began (`not_committed`)."""
    try:
        yield
    except DatabaseError as error:
        log.warning("%s failed: %s", what, type(error).__name__)
        raise OutcomeUnavailable(outcome=OutcomeUnavailable.NOT_COMMITTED) from None
