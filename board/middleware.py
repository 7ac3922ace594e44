"""Keeps every answer under /api/v1/ in the API's error shape.

Django and ninja answer some refusals before any view runs (a wrong method, a body over
Django's own cap, an unexpected exception); this rewrites those into SPEC 5's shape.
"""

import json
import logging

from django.http import HttpRequest, HttpResponse

from board.exceptions import BadRequest, BoardError, MethodNotAllowed, NotFound, error_answer

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1/"


class _Internal(BoardError):
    status = 500
    code = "internal"
    message = "the server failed to answer; nothing is known about this call"


_BY_STATUS = {400: BadRequest, 404: NotFound, 405: MethodNotAllowed, 500: _Internal}


class ApiErrorShapeMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code not in _BY_STATUS:
            return response
        if response.get("Content-Type", "").startswith("application/json") and _has_shape(response):
            return response
        answer = error_answer(_BY_STATUS[response.status_code]())
        shaped = HttpResponse(
            json.dumps(answer.body), status=answer.status, content_type="application/json"
        )
        if "Allow" in response:
            shaped["Allow"] = response["Allow"]
        return shaped

    def process_exception(self, request: HttpRequest, exception: Exception):
        if request.path.startswith(API_PREFIX):
            log.error("unhandled %s on %s", type(exception).__name__, request.path)
        return None


def _has_shape(response: HttpResponse) -> bool:
    try:
        return "error" in json.loads(response.content)
    except (ValueError, TypeError):
        return False
