"""Helpers the client tests share: counting entries per request_id."""

import uuid


def entries_for(request_id: str) -> list:
    """The entries whose body carries this request_id (the tests put it there)."""
    from board.models import Entry

    return list(Entry.objects.filter(body__contains=request_id))


def new_id() -> str:
    return str(uuid.uuid4())
