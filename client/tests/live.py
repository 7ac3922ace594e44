"""Helpers the client tests share: counting entries per request_id."""

import uuid


def entries_for(request_id: str) -> list:
    """The entries whose body carries this request_id (the tests put it there)."""
    from board.models import Entry

    return list(Entry.objects.filter(body__contains=request_id))


def new_id() -> str:
    return str(uuid.uuid4())


# The deadline caps the last attempt's timeout, so on a slow machine the last attempt may
# end in a timeout instead of the answer the earlier attempts got.
CUT_BY_THE_DEADLINE = {"ReadTimeout", "WriteTimeout", "ConnectTimeout", "PoolTimeout",
                       "TimeoutError"}
