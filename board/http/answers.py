"""The calls both transports share: one `*_answer` function per call, and reading who
and where a request comes from. The HTTP endpoints (board/http/api.py) and the MCP tools
(board/mcp/tools.py) each translate their wire format into one of these and send the
`Answer` back in theirs, so a call answers the same on either route.
"""

import functools
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import timezone

from board import selectors, services
from board.entries.fields import EntryFields, RefusedShape, parse_request_id
from board.entries.objects import entry_object, public_entry_object, timestamp
from board.exceptions import (
    Answer,
    BoardError,
    InvalidRequest,
    NotFound,
    error_answer,
)
from board.http.auth import presented_token
from board.posting.callers import Caller, client_address
from board.serving import metrics, replicas
from receipts.exceptions import OutcomeUnavailable, ReceiptError

log = logging.getLogger(__name__)

ASCII_NUMBER = re.compile(r"[0-9]{1,18}")

# What a read answers when the database fails it; posts say more (receipts.exceptions).
READ_FAILED = OutcomeUnavailable(
    outcome=OutcomeUnavailable.NOT_COMMITTED,
    message="the database did not answer; nothing was changed. Try the call again.",
)
# What a read answers when the tables are not there: a deployment that skipped migrate.
NOT_MIGRATED = OutcomeUnavailable(
    outcome=OutcomeUnavailable.NOT_COMMITTED,
    message="the database has no Settle tables yet: the operator must apply the migrations "
            "(bin/settle migrate); nothing was changed.",
)


def read_failed(error: DatabaseError) -> OutcomeUnavailable:
    """The answer to a read the database failed; a missing table is said as such."""
    text = str(error)
    if "no such table" in text or ("relation" in text and "does not exist" in text):
        return NOT_MIGRATED
    return READ_FAILED


# --- Translating requests and answers ----------------------------------------------------

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def wire_json(payload: object) -> bytes:
    """An answer's JSON as both doors send it: UTF-8, and a lone surrogate a client sent
    (echoed in an unknown key's name) as its escape, the one form it has. Not all ASCII:
    an escaped astral character is 12 bytes, and a refusal echoing 20 keys of 64 of
    them would pass SPEC 11.6's 16 KiB; in UTF-8 no echoed character costs more than 6."""
    text = json.dumps(payload, ensure_ascii=False, cls=DjangoJSONEncoder)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub(lambda lone: f"\\u{ord(lone[0]):04x}", text).encode("utf-8")



@dataclass(frozen=True)
class Sender:
    """What a request says about who sends it and where: the token it presents
    (board.http.auth), the client's address (SPEC 4, `client_address`), and the base of
    the absolute URLs it is answered with (`request_base`)."""

    token: str | None
    address: str
    base: str


def request_sender(request: HttpRequest) -> Sender:
    return Sender(
        token=presented_token(request), address=client_address(request),
        base=request_base(request),
    )


def request_base(request: HttpRequest) -> str:
    """SETTLE_PUBLIC_URL, else the request's own host, which CommonMiddleware validated
    on every route."""
    return settings.SETTLE_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


ANSWERED_ERRORS = (BoardError, ReceiptError, DatabaseError)


def refusal_answer(error: BoardError | ReceiptError | DatabaseError) -> Answer:
    """A refusal's answer, through the one mapping `error_answer`."""
    if isinstance(error, DatabaseError):
        # Writes translate their own faults inside entry_post; what reaches here
        # failed before anything was written. Log the class, never the text.
        log.warning("call failed with %s", type(error).__name__)
        return error_answer(read_failed(error))
    return error_answer(error)


def answers(function: Callable[..., Answer]) -> Callable[..., Answer]:
    """Turn a call's refusal into its answer, through `refusal_answer`."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs) -> Answer:
        try:
            return function(*args, **kwargs)
        except ANSWERED_ERRORS as error:
            return refusal_answer(error)

    return wrapper


def parse_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return 50
    # ASCII digits only: int() also reads other scripts' digits, which no client means.
    limit = int(raw) if ASCII_NUMBER.fullmatch(raw) else 0
    if not 1 <= limit <= 100:
        raise InvalidRequest([{"field": "limit", "problem": "must be an integer from 1 to 100"}])
    return limit


def parse_entry_id(raw: str) -> int:
    if not ASCII_NUMBER.fullmatch(raw) or len(raw) > 18:
        raise NotFound("no public entry has this id")
    return int(raw)


# --- Calls: one function per endpoint and tool ------------------------------------------


@metrics.counted_post
def entry_post_answer(
    *, token: str | None, address: str, fields: EntryFields | RefusedShape, route: str,
    base: str,
) -> Answer:
    # Only the service call refuses: its refusals are answered here as `@answers` would.
    try:
        posted = services.entry_post(token=token, address=address, fields=fields, route=route)
    except ANSWERED_ERRORS as error:
        return refusal_answer(error)
    replicas.written(source=posted.source)
    answer = entry_object(posted.entry, posted.receipt, replayed=posted.replayed, base_url=base)
    headers = {"Location": f"/api/v1/operations/{posted.receipt.request_id}"}
    if posted.replayed:
        headers["Idempotent-Replayed"] = "true"
    return Answer(status=200 if posted.replayed else 201, body=answer, headers=headers)


@answers
def request_id_answer(*, caller: Caller) -> Answer:
    return Answer(status=201, body={"request_id": str(services.request_id_new())})


@answers
def operation_answer(*, caller: Caller, request_id: object, base: str) -> Answer:
    try:
        parsed = parse_request_id(request_id)
    except ValueError as error:
        raise InvalidRequest([{"field": "request_id", "problem": str(error)}]) from None
    operation = selectors.operation_get(caller=caller, request_id=parsed, now=timezone.now())
    return Answer(status=200, body=operation_object(operation, base))


@answers
@replicas.public_read(by_name=False)
def thread_list_answer(
    *, caller: Caller, cursor: str | None, limit: str | None, base: str
) -> Answer:
    page = selectors.thread_list(cursor=cursor, limit=parse_limit(limit))
    items = [thread_object(thread, base) for thread in page.items]
    return Answer(status=200, body={"items": items, "next_cursor": page.next_cursor})


@answers
@replicas.public_read(by_name=True)
def thread_answer(*, caller: Caller, thread_id: str, base: str) -> Answer:
    thread = selectors.thread_get(thread_id=parse_entry_id(thread_id))
    return Answer(status=200, body=thread_object(thread, base))


@answers
@replicas.public_read(by_name=True)
def reply_list_answer(
    *, caller: Caller, thread_id: str, cursor: str | None, limit: str | None, base: str
) -> Answer:
    page = selectors.reply_list(
        thread_id=parse_entry_id(thread_id), cursor=cursor, limit=parse_limit(limit)
    )
    items = [public_entry_object(reply, base) for reply in page.items]
    return Answer(status=200, body={"items": items, "next_cursor": page.next_cursor})


def operation_object(operation: selectors.Operation, base: str) -> dict:
    receipt = operation.receipt
    result = None
    if operation.entry is not None:
        result = entry_object(operation.entry, receipt, replayed=False, base_url=base)
    return {
        "request_id": str(operation.request_id),
        "operation": selectors.POST_ENTRY,
        "status": operation.status,
        "result": result,
        "first_route": receipt.first_route if receipt else None,
        "attempts": receipt.attempts if receipt else None,
        "created_at": timestamp(receipt.first_seen_at) if receipt else None,
        "receipt_expires_at": timestamp(receipt.receipt_expires_at) if receipt else None,
    }


def thread_object(thread, base: str) -> dict:
    return {**public_entry_object(thread, base), "reply_count": thread.reply_count}
