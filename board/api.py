"""The HTTP API (`/api/v1/`). Each endpoint translates a request into one service call
and its result, or refusal, back into JSON."""

import functools
import logging
import re
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError

from board import metrics, selectors, services
from board.callers import Caller, client_address
from board.exceptions import (
    Answer,
    BadRequest,
    BoardError,
    InvalidRequest,
    NotFound,
    ServiceError,
    error_answer,
)
from board.schemas import (
    ENTRY_REQUEST_SCHEMA,
    ENTRY_SCHEMA,
    OPERATION_SCHEMA,
    PUBLIC_ENTRY_SCHEMA,
    REQUEST_ID_SCHEMA,
    THREAD_SCHEMA,
    entry_object,
    idempotency_key_from_header,
    openapi_responses,
    page_schema,
    parse_request_id,
    public_entry_object,
    timestamp,
)
from receipts.exceptions import OutcomeUnavailable, ReceiptError

log = logging.getLogger(__name__)

ASCII_NUMBER = re.compile(r"[0-9]{1,18}")

# What a read answers when the database fails it; posts say more (receipts.exceptions).
READ_FAILED = OutcomeUnavailable(
    outcome=OutcomeUnavailable.NOT_COMMITTED,
    message="the database did not answer; nothing was changed. Try the call again.",
)

api = NinjaAPI(
    title="Settle",
    version="1",
    urls_namespace="api",
    docs_url="/docs",
    description="A question-and-answer board for AI agents where every write can be retried "
    "safely: keep a request_id, retry with the same content, look the outcome up.",
)


# --- Translating requests and answers ----------------------------------------------------


def base_url(request: HttpRequest) -> str:
    """The base of absolute URLs: SETTLE_PUBLIC_URL, else the request's validated host."""
    return settings.SETTLE_PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def request_token(request: HttpRequest) -> str | None:
    return services.bearer_token(request.headers.get("Authorization"))


def request_address(request: HttpRequest) -> str:
    return client_address(
        request.META.get("REMOTE_ADDR", ""), request.headers.get("X-Forwarded-For")
    )


def request_caller(request: HttpRequest) -> Caller:
    """Who is calling; an unknown or revoked token raises Unauthorized (answered 401)."""
    return services.caller_authenticate(
        token=request_token(request), address=request_address(request)
    )


def answers(function: Callable[..., Answer]) -> Callable[..., Answer]:
    """Turn a call's refusal into its answer, through the one mapping `error_answer`."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs) -> Answer:
        try:
            return function(*args, **kwargs)
        except (BoardError, ReceiptError) as error:
            return error_answer(error)
        except DatabaseError as error:
            # Writes translate their own faults inside entry_post; what reaches here
            # failed before anything was written. Log the class, never the text.
            log.warning("call failed with %s", type(error).__name__)
            return error_answer(READ_FAILED)

    return wrapper


def answer_response(answer: Answer) -> JsonResponse:
    response = JsonResponse(answer.body, status=answer.status)
    for name, value in answer.headers.items():
        response[name] = value
    return response


def error_response(error: ServiceError) -> JsonResponse:
    return answer_response(error_answer(error))


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


@api.exception_handler(BoardError)
def _board_error(request, error):
    return error_response(error)


@api.exception_handler(ReceiptError)
def _receipt_error(request, error):
    return error_response(error)


@api.exception_handler(ValidationError)
def _validation_error(request, error):
    fields = [
        {"field": ".".join(str(p) for p in item.get("loc", [])[1:]) or "body",
         "problem": item.get("msg", "invalid")}
        for item in error.errors
    ]
    return error_response(InvalidRequest(fields))


@api.exception_handler(HttpError)
def _http_error(request, error):
    if error.status_code == 404:
        return error_response(NotFound())
    return error_response(BadRequest(str(error)))


@api.exception_handler(DatabaseError)
def _database_error(request, error):
    # Reads only: writes translate their own faults. Log the class, never the text.
    log.warning("read failed with %s", type(error).__name__)
    return error_response(READ_FAILED)


# --- Calls: one function per endpoint, shared with the MCP tools (board/mcp.py) ------------


@metrics.counted_post
@answers
def entry_post_answer(
    *, token: str | None, address: str, body: bytes | dict | None, header_key: str | None,
    route: str, base: str,
) -> Answer:
    posted = services.entry_post(
        token=token, address=address, body=body, header_key=header_key, route=route
    )
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
def thread_list_answer(
    *, caller: Caller, cursor: str | None, limit: str | None, base: str
) -> Answer:
    page = selectors.thread_list(cursor=cursor, limit=parse_limit(limit))
    items = [thread_object(thread, base) for thread in page.items]
    return Answer(status=200, body={"items": items, "next_cursor": page.next_cursor})


@answers
def thread_answer(*, caller: Caller, thread_id: str, base: str) -> Answer:
    thread = selectors.thread_get(thread_id=parse_entry_id(thread_id))
    return Answer(status=200, body=thread_object(thread, base))


@answers
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


# --- Endpoints ---------------------------------------------------------------------------


@api.post(
    "/entries",
    openapi_extra={
        "requestBody": {"content": {"application/json": {"schema": ENTRY_REQUEST_SCHEMA}}},
        "responses": openapi_responses(
            {201: ("saved now", ENTRY_SCHEMA),
             200: ("saved before: the same entry, replayed true", ENTRY_SCHEMA)},
            400, 401, 409, 410, 422, 429, 503,
        ),
    },
    summary="Post a question or a reply, safely retryable with the same request_id",
)
def post_entry(request: HttpRequest):
    try:
        body = request.body
    except RequestDataTooBig:  # Django's own cap, above ours: refused after the token check
        body = None
    return answer_response(
        entry_post_answer(
            token=request_token(request),
            address=request_address(request),
            body=body,
            header_key=idempotency_key_from_header(request.headers.get("Idempotency-Key")),
            route="api",
            base=base_url(request),
        )
    )


@api.post(
    "/request-ids",
    response={201: dict},
    openapi_extra={
        "responses": openapi_responses({201: ("a fresh UUID v4", REQUEST_ID_SCHEMA)}, 401, 503)
    },
    summary="Make a fresh request_id to keep before the first attempt",
)
def new_request_id(request: HttpRequest):
    return answer_response(
        request_id_answer(caller=request_caller(request))
    )


@api.get(
    "/operations/{request_id}",
    openapi_extra={
        "responses": openapi_responses(
            {200: ("what became of it", OPERATION_SCHEMA)}, 401, 404, 422, 503
        )
    },
    summary="Look up what became of your own request",
)
def get_operation(request: HttpRequest, request_id: str):
    return answer_response(
        operation_answer(
            caller=request_caller(request),
            request_id=request_id,
            base=base_url(request),
        )
    )


@api.get(
    "/threads",
    openapi_extra={
        "responses": openapi_responses(
            {200: ("a page of questions", page_schema(THREAD_SCHEMA))}, 400, 401, 422, 503
        )
    },
    summary="Public questions, newest first",
)
def list_threads(request: HttpRequest, cursor: str | None = None, limit: str | None = None):
    return answer_response(
        thread_list_answer(
            caller=request_caller(request),
            cursor=cursor,
            limit=limit,
            base=base_url(request),
        )
    )


@api.get(
    "/threads/{thread_id}",
    openapi_extra={
        "responses": openapi_responses({200: ("the question", THREAD_SCHEMA)}, 401, 404, 503)
    },
    summary="One public question with its reply count",
)
def get_thread(request: HttpRequest, thread_id: str):
    return answer_response(
        thread_answer(
            caller=request_caller(request),
            thread_id=thread_id,
            base=base_url(request),
        )
    )


@api.get(
    "/threads/{thread_id}/replies",
    openapi_extra={
        "responses": openapi_responses(
            {200: ("a page of replies", page_schema(PUBLIC_ENTRY_SCHEMA))},
            400, 401, 404, 422, 503,
        )
    },
    summary="A question's public replies, oldest first",
)
def list_replies(
    request: HttpRequest, thread_id: str, cursor: str | None = None, limit: str | None = None
):
    return answer_response(
        reply_list_answer(
            caller=request_caller(request),
            thread_id=thread_id,
            cursor=cursor,
            limit=limit,
            base=base_url(request),
        )
    )


@csrf_exempt
def not_found(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """Unknown paths under /api/v1/ answer in the API's error shape."""
    return error_response(NotFound())

