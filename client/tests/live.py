"""Helpers the client tests share: clients per transport, counting entries per request_id."""

import json
import uuid
from datetime import timedelta

from settle_client import Client

# An MCP call is three HTTP exchanges (discover, the tool call, tools/list), so it gets
# more time; the proxy holds an answer 3 s, past either attempt timeout.
TIMINGS = {"http": {"deadline": 4.0, "attempt_timeout": 1.0},
           "mcp": {"deadline": 6.0, "attempt_timeout": 2.0}}


def client_for(proxy, token, journal, transport: str = "http", **options) -> Client:
    return Client(proxy.url, token=token, journal=journal, transport=transport,
                  **{**TIMINGS[transport], **options})


def entries_for(request_id: str) -> list:
    """The entries whose body carries this request_id (the tests put it there)."""
    from board.models import Entry

    return list(Entry.objects.filter(body__contains=request_id))


def new_id() -> str:
    return str(uuid.uuid4())


def post_long_ago(token: str, request: dict, *, hours: float) -> dict:
    """Post REQUEST through the API in this process, HOURS ago (the server's clock moved
    back with time-machine): an earlier attempt whose answer was lost back then."""
    import time_machine
    from django.test import Client as DjangoClient
    from django.utils import timezone

    with time_machine.travel(timezone.now() - timedelta(hours=hours), tick=False):
        response = DjangoClient().post(
            "/api/v1/entries", data=json.dumps(request), content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
    assert response.status_code == 201, response.content
    return response.json()


def question_request(request_id: str, title: str, body: str, actor: dict) -> dict:
    """The request Client.post_question sends for these arguments."""
    return {"request_id": request_id, "type": "question", "parent_id": None, "title": title,
            "body": body, "actor": actor, "submission_mode": "autonomous"}


# The deadline caps the last attempt's timeout, so on a slow machine the last attempt may
# end in a timeout instead of the answer the earlier attempts got.
CUT_BY_THE_DEADLINE = {"ReadTimeout", "WriteTimeout", "ConnectTimeout", "PoolTimeout",
                       "TimeoutError"}
