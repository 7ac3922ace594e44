"""What settling a write can end in: Settled (returned), Refused and Unconfirmed (raised)."""

from dataclasses import dataclass
from typing import Any


class SettleError(Exception):
    """A write that did not settle: Refused (final) or Unconfirmed (maybe saved)."""

    request_id: str

    def as_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class Settled:
    """The server answered 201, 200 with replayed: true, or a lookup said succeeded."""

    request_id: str
    entry: dict[str, Any]
    replayed: bool
    how: str  # created, replayed or looked_up

    def as_json(self) -> dict[str, Any]:
        return {"outcome": "settled", "request_id": self.request_id, "entry": self.entry,
                "how": self.how, "replayed": self.replayed}


class Refused(SettleError):
    """A final answer: nothing (more) will be saved for this request_id.

    details holds the error object's fields other than code, the server's message among
    them (also kept as message): what happened and what to do next, in its words.
    """

    def __init__(self, *, code: str, status: int, request_id: str,
                 details: dict[str, Any] | None = None, message: str = "") -> None:
        super().__init__(f"refused: {status} {code} for {request_id}")
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details = details or {}
        self.message = message

    def as_json(self) -> dict[str, Any]:
        return {"outcome": "refused", "request_id": self.request_id, "code": self.code,
                "status": self.status, "message": self.message, "details": self.details}


class Unconfirmed(SettleError):
    """Not settled within the deadline: it may or may not be saved; resume() settles it."""

    def __init__(self, *, request_id: str, reason: str, retry_after: float | None) -> None:
        super().__init__(f"unconfirmed: {request_id} ({reason})")
        self.request_id = request_id
        self.reason = reason
        self.retry_after = retry_after

    def as_json(self) -> dict[str, Any]:
        return {"outcome": "unconfirmed", "request_id": self.request_id, "reason": self.reason,
                "retry_after": self.retry_after}


Outcome = Settled | Refused | Unconfirmed


@dataclass
class PendingIntent:
    """An intent the journal holds that is not settled yet."""

    request_id: str
    type: str
    created_at: str

    def as_json(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "type": self.type, "created_at": self.created_at}
