"""The board's refusals, and the one mapping from any refusal to SPEC 5's error shape.

The HTTP API and the MCP tools both answer through `error_answer`, so a refusal reads the
same on either route.
"""

from dataclasses import dataclass, field

from receipts.exceptions import ReceiptError


class BoardError(Exception):
    status = 500
    code = "internal"
    message = "unexpected error"
    retry_after: int | None = None

    def __init__(self, message: str | None = None) -> None:
        if message is not None:
            self.message = message
        super().__init__(self.message)

    def details(self) -> dict:
        return {}


class BadRequest(BoardError):
    status = 400
    code = "bad_request"


class Unauthorized(BoardError):
    status = 401
    code = "unauthorized"
    message = "the bearer token is unknown or revoked"


class Forbidden(BoardError):
    status = 403
    code = "forbidden"
    message = (
        "a browser page on this Origin may not post to Settle; agents send no Origin "
        "(SETTLE_API_ALLOWED_ORIGINS lists the allowed ones)"
    )


class NotFound(BoardError):
    status = 404
    code = "not_found"
    message = "no such resource"


class MethodNotAllowed(BoardError):
    status = 405
    code = "method_not_allowed"
    message = "this path does not accept that method"


# A refusal never grows with its input (SPEC 11.6): `error.fields` keeps the first
# problems, each field name (which may echo a client's key) cut, and counts the rest.
FIELDS_LISTED = 20
FIELD_ECHOED = 64
# Every JSON-RPC answer over MCP echoes the request's id, refusals included: a string id
# longer than this is refused as no id (JSON's integers stop at 4,300 digits).
RPC_ID_LONGEST = 1000


class InvalidRequest(BoardError):
    status = 422
    code = "invalid_request"
    message = "the request has invalid fields"

    def __init__(self, fields: list[dict[str, str]]) -> None:
        self.fields = [
            {**problem, "field": problem["field"][:FIELD_ECHOED]}
            for problem in fields[:FIELDS_LISTED]
        ]
        self.fields_omitted = max(len(fields) - FIELDS_LISTED, 0)
        # The first problem alone, so the message stays one line whatever was sent.
        said = None
        if self.fields:
            first = self.fields[0]
            said = f"{first['field']}: {first['problem']}"
            if self.fields_omitted:
                said += (f" (and {len(fields) - 1} more problems: error.fields lists the "
                         f"first {FIELDS_LISTED}, error.fields_omitted counts the rest)")
            elif len(fields) > 1:
                said += f" (and {len(fields) - 1} more problems in error.fields)"
        super().__init__(said)

    def details(self) -> dict:
        details: dict = {"fields": self.fields}
        if self.fields_omitted:
            details["fields_omitted"] = self.fields_omitted
        return details


class ParentUnavailable(BoardError):
    status = 422
    code = "parent_unavailable"
    message = "parent_id must be a public question whose receipt has not expired"


class RateLimited(BoardError):
    status = 429
    code = "rate_limited"

    def __init__(self, *, limit: str, retry_after: int) -> None:
        scope = "this source" if limit == "source" else "the whole board"
        super().__init__(f"too many writes for {scope} this hour; retry after {retry_after}s")
        self.limit = limit
        self.retry_after = retry_after

    def details(self) -> dict:
        return {"limit": self.limit}


class PostingPaused(BoardError):
    status = 503
    code = "writes_disabled"
    retry_after = 60

    def __init__(self, *, reason: str) -> None:
        super().__init__(reason or "posting is paused by an operator")


ServiceError = BoardError | ReceiptError

# The engine's answers by code (receipts/exceptions.py carries no HTTP): SPEC 5's statuses.
RECEIPT_STATUS = {
    "conflict": 409,
    "in_progress": 409,
    "deleted": 410,
    "expired": 410,
    "unavailable": 503,
}


def error_status(error: ServiceError) -> int:
    if isinstance(error, BoardError):
        return error.status
    return RECEIPT_STATUS.get(error.code, 500)


@dataclass(frozen=True)
class Answer:
    """What Settle answers for one call: status, JSON body and extra headers.

    The HTTP endpoints send it as is; the MCP tools return its status and body as their
    `structuredContent`, so both routes answer the same call identically.
    """

    status: int
    body: dict
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def retry_after(self) -> int | None:
        error = self.body.get("error")
        return error.get("retry_after_seconds") if isinstance(error, dict) else None


def error_answer(error: ServiceError) -> Answer:
    status = error_status(error)
    payload = {"code": error.code, "message": error.message, **error.details()}
    headers = {}
    if status in (429, 503) or error.retry_after is not None:
        retry_after = error.retry_after if error.retry_after is not None else 1
        payload["retry_after_seconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    if status == 401:  # RFC 6750: say which scheme would be accepted
        headers["WWW-Authenticate"] = 'Bearer realm="settle"'
    return Answer(status=status, body={"error": payload}, headers=headers)
