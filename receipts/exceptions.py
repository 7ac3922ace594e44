"""What the idempotency engine answers instead of a fresh result.

Each carries the code of SPEC 5 and a message; the engine knows no transport. The HTTP
status belongs to the one mapping that HTTP and MCP share (board.exceptions.error_answer).
"""

from datetime import datetime


class ReceiptError(Exception):
    code = "internal"
    message = "unexpected error"
    retry_after: int | None = None

    def details(self) -> dict:
        return {}


class RequestConflict(ReceiptError):
    code = "conflict"
    message = "this request_id was already used with different content; nothing was saved"

    def __init__(self, *, conflicting_fields: list[str], existing_id: int | None) -> None:
        super().__init__(self.message)
        self.conflicting_fields = conflicting_fields
        self.existing_id = existing_id

    def details(self) -> dict:
        return {"conflicting_fields": self.conflicting_fields, "existing_id": self.existing_id}


class RequestInProgress(ReceiptError):
    code = "in_progress"
    message = "another call with this request_id is still being saved; retry it shortly"
    retry_after = 1


class RequestDeleted(ReceiptError):
    code = "deleted"
    message = "an operator deleted the entry this request_id created; it will not be recreated"


class RequestExpired(ReceiptError):
    code = "expired"
    message = "the receipt for this request_id has expired; make a new request_id to post again"

    def __init__(self, *, expired_at: datetime | None = None) -> None:
        super().__init__(self.message)
        self.expired_at = expired_at


class OutcomeUnavailable(ReceiptError):
    """A transient fault; `outcome` says truthfully whether anything may have been saved."""

    code = "unavailable"
    retry_after = 1

    NOT_COMMITTED = "not_committed"
    UNKNOWN = "unknown"

    def __init__(self, *, outcome: str, message: str | None = None) -> None:
        self.outcome = outcome
        if message is not None:
            self.message = message
        elif outcome == self.NOT_COMMITTED:
            self.message = "nothing was saved; retry with the same request_id and content"
        else:
            self.message = (
                "the write may or may not have been saved; retry with the same request_id "
                "and content, or look up its operation"
            )
        super().__init__(self.message)

    def details(self) -> dict:
        return {"outcome": self.outcome}
