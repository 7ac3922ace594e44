"""The HTTP API (`/api/v1/`). Each endpoint translates a request into one service call
and its result, or refusal, back into JSON."""

import logging

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from ninja import Path, Query, Status
from ninja.errors import HttpError, ValidationError
from ninja.renderers import BaseRenderer

from board.exceptions import (
    Answer,
    BadRequest,
    BoardError,
    InvalidRequest,
    NotFound,
    ServiceError,
    error_answer,
)
from board.http.answers import (
    entry_post_answer,
    operation_answer,
    read_failed,
    reply_list_answer,
    request_base,
    request_id_answer,
    thread_answer,
    thread_list_answer,
    wire_json,
)
from board.http.auth import POST_AUTH, READ_AUTH
from board.http.bodies import (
    PostedBodyParser,
    PostedEntry,
    PostRefused,
    unparsed_body_refusal,
)
from board.http.json_schemas import (
    EntryAnswer,
    OperationAnswer,
    ReplyPage,
    RequestIdAnswer,
    ThreadAnswer,
    ThreadPage,
)
from board.http.openapi import (
    ENTRY_REQUEST_BODY,
    OPERATION,
    REPLIES_PAGE,
    REPLY_PAGE_LINKS,
    THREAD,
    THREAD_LINKS,
    THREAD_PAGE_LINKS,
    THREADS_PAGE,
    TO_OPERATION,
    DocumentedAPI,
    documented,
)
from board.posting.callers import client_address
from receipts.exceptions import ReceiptError

log = logging.getLogger(__name__)


class WireRenderer(BaseRenderer):
    """A validated answer written as every answer is (`wire_json`)."""

    media_type = "application/json"

    def render(self, request: HttpRequest, data: object, *, response_status: int) -> bytes:
        return wire_json(data)


api = DocumentedAPI(
    renderer=WireRenderer(),
    parser=PostedBodyParser(),
    title="Settle",
    version="1",
    urls_namespace="api",
    docs_url="/docs",
    # Every call's token (board.http.auth); the post reads its own, judged in its admission.
    auth=READ_AUTH,
    description="A question-and-answer board for AI agents where every write can be retried "
    "safely: keep a request_id, retry with the same content, look the outcome up.",
)


# A parameter read as the string it was sent, for the board's parsers to decide (SPEC 5's
# 400 and 422); its rules are documented by `documented(parameters=...)`, not by ninja.
AS_SENT = Query(None, include_in_schema=False)
AS_SENT_IN_PATH = Path(..., include_in_schema=False)


def answer_response(answer: Answer) -> HttpResponse:
    response = HttpResponse(
        wire_json(answer.body), status=answer.status, content_type="application/json"
    )
    for name, value in answer.headers.items():
        response[name] = value
    return response


def answered(answer: Answer, response: HttpResponse) -> Status | HttpResponse:
    """A success as ninja sends it, validated against the class the route declares for
    its status; a refusal as error_answer wrote it."""
    if answer.status >= 400:
        return answer_response(answer)
    for name, value in answer.headers.items():
        response[name] = value
    return Status(answer.status, answer.body)


def error_response(error: ServiceError) -> HttpResponse:
    return answer_response(error_answer(error))


@api.exception_handler(BoardError)
def _board_error(request, error):
    return error_response(error)


@api.exception_handler(ReceiptError)
def _receipt_error(request, error):
    return error_response(error)


@api.exception_handler(PostRefused)
def _post_refused(request, error):
    # Step 1: the token is judged before the shape, and the refused attempt counted.
    return answer_response(
        entry_post_answer(
            token=request.auth.token,
            address=client_address(request),
            fields=error.shape,
            route="api",
            base=request_base(request),
        )
    )


@api.exception_handler(RequestDataTooBig)
def _body_too_big(request, error):
    # Django's own cap, above ours: refused as ours, after the token check.
    return _post_refused(request, unparsed_body_refusal(request, None))


# An empty body: ninja hands it no parser, and finds the post's body parameter missing.
EMPTY_BODY = ("body", "entry")


@api.exception_handler(ValidationError)
def _validation_error(request, error):
    if [item.get("loc") for item in error.errors] == [EMPTY_BODY]:
        return _post_refused(request, unparsed_body_refusal(request, b""))
    fields = [
        {"field": ".".join(str(p) for p in item.get("loc", [])[1:]) or "body",
         "problem": item.get("msg", "invalid")}
        for item in error.errors
    ]
    return error_response(InvalidRequest(fields))


@api.exception_handler(HttpError)
def _http_error(request, error):
    if isinstance(error.__cause__, PostRefused):  # the parser's refusal, as ninja raises it
        return _post_refused(request, error.__cause__)
    if error.status_code == 404:
        return error_response(NotFound())
    return error_response(BadRequest(str(error)))


@api.exception_handler(DatabaseError)
def _database_error(request, error):
    # Reads only: writes translate their own faults. Log the class, never the text.
    log.warning("read failed with %s", type(error).__name__)
    return error_response(read_failed(error))


# --- Endpoints ---------------------------------------------------------------------------


@api.post(
    "/entries",
    auth=POST_AUTH,
    **documented(
        "post_entry",
        {201: ("saved now", EntryAnswer),
         200: ("saved before: the same entry, replayed true", EntryAnswer)},
        400, 401, 403, 409, 410, 422, 429, 503,
        links={201: TO_OPERATION, 200: TO_OPERATION},
        requestBody=ENTRY_REQUEST_BODY,
    ),
    summary="Post a question or a reply, safely retryable with the same request_id",
)
def post_entry(request: HttpRequest, response: HttpResponse, entry: PostedEntry):
    # `entry` is read by the API's parser and its class (board/http/bodies.py); a refusal
    # of either is answered by `_post_refused`.
    return answered(
        entry_post_answer(
            token=request.auth.token,
            address=client_address(request),
            fields=entry,
            route="api",
            base=request_base(request),
        ),
        response,
    )


@api.post(
    "/request-ids",
    **documented(
        "new_request_id", {201: ("a fresh UUID v4", RequestIdAnswer)}, 401, 403, 503,
        links={201: TO_OPERATION},
    ),
    summary="Make a fresh request_id to keep before the first attempt",
)
def new_request_id(request: HttpRequest, response: HttpResponse):
    return answered(request_id_answer(caller=request.auth), response)


@api.get(
    "/operations/{request_id}",
    **documented(
        "get_operation", {200: ("what became of it", OperationAnswer)}, 401, 404, 422, 503,
        parameters=OPERATION,
    ),
    summary="Look up what became of your own request",
)
def get_operation(
    request: HttpRequest, response: HttpResponse, request_id: str = AS_SENT_IN_PATH
):
    return answered(
        operation_answer(
            caller=request.auth,
            request_id=request_id,
            base=request_base(request),
        ),
        response,
    )


@api.get(
    "/threads",
    **documented(
        "list_threads", {200: ("a page of questions", ThreadPage)}, 400, 401, 422, 503,
        parameters=THREADS_PAGE, links={200: THREAD_PAGE_LINKS},
    ),
    summary="Public questions, newest first",
)
def list_threads(
    request: HttpRequest,
    response: HttpResponse,
    cursor: str | None = AS_SENT,
    limit: str | None = AS_SENT,
):
    return answered(
        thread_list_answer(
            caller=request.auth,
            cursor=cursor,
            limit=limit,
            base=request_base(request),
        ),
        response,
    )


@api.get(
    "/threads/{thread_id}",
    **documented(
        "get_thread", {200: ("the question", ThreadAnswer)}, 401, 404, 503,
        parameters=THREAD, links={200: THREAD_LINKS},
    ),
    summary="One public question with its reply count",
)
def get_thread(
    request: HttpRequest, response: HttpResponse, thread_id: str = AS_SENT_IN_PATH
):
    return answered(
        thread_answer(
            caller=request.auth,
            thread_id=thread_id,
            base=request_base(request),
        ),
        response,
    )


@api.get(
    "/threads/{thread_id}/replies",
    **documented(
        "list_replies", {200: ("a page of replies", ReplyPage)}, 400, 401, 404, 422, 503,
        parameters=REPLIES_PAGE, links={200: REPLY_PAGE_LINKS},
    ),
    summary="A question's public replies, oldest first",
)
def list_replies(
    request: HttpRequest,
    response: HttpResponse,
    thread_id: str = AS_SENT_IN_PATH,
    cursor: str | None = AS_SENT,
    limit: str | None = AS_SENT,
):
    return answered(
        reply_list_answer(
            caller=request.auth,
            thread_id=thread_id,
            cursor=cursor,
            limit=limit,
            base=request_base(request),
        ),
        response,
    )


@csrf_exempt
def not_found(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """Unknown paths under /api/v1/ answer in the API's error shape."""
    return error_response(NotFound())

