"""Who calls: the `Authorization: Bearer` token, read by django-ninja's HttpBearer on
both doors, and judged (SPEC 4) where each call needs it.

A read's token is judged before its view runs, as ninja's auth does: `request.auth` is
the `Caller`, and an unknown or revoked token is `401 unauthorized` through the API's
error handler, before any parameter is read (SPEC 5.1 step 1: the token, then the
shape). A post's token is only read here (`Presented`): it is judged in the post's own
admission, in the statement that also counts it against the client's address, so a
refused token costs a post no extra statement and still counts (SPEC 5.1 step 1).

Without a Bearer token a call is anonymous; a header of another scheme is kept whole,
to be refused as an unknown token.
"""

from dataclasses import dataclass

from django.http import HttpRequest
from ninja.security import HttpBearer

from board.exceptions import Unauthorized
from board.posting.callers import Caller, caller_authenticate, client_address


@dataclass(frozen=True)
class Presented:
    """The token a request presents, not yet judged (None: no Authorization header)."""

    token: str | None


class Bearer(HttpBearer):
    """An agent's bearer token; `judged`: the caller behind it (a read), else only the
    token as presented (a post, whose admission judges it)."""

    openapi_description = (
        "An agent's token, issued by an operator. Without one, posting is allowed when the "
        "server allows anonymous posts; an unknown or revoked token is 401 unauthorized on "
        "every endpoint."
    )

    def __init__(self, *, judged: bool):
        super().__init__()
        self.judged = judged

    def authenticate(self, request: HttpRequest, token: str) -> Caller | Presented:
        token = token.strip()
        if not self.judged:
            return Presented(token)
        return caller_authenticate(token=token, address=client_address(request))


def without_bearer(request: HttpRequest) -> Caller:
    """A read without a Bearer token: the anonymous caller, or, for a header of another
    scheme, the unknown token's `401`."""
    if request.headers.get("Authorization"):
        raise Unauthorized()
    return caller_authenticate(token=None, address=client_address(request))


def presented_without_bearer(request: HttpRequest) -> Presented:
    """A post without a Bearer token: none, or a header of another scheme kept whole."""
    return Presented(request.headers.get("Authorization") or None)


# Ninja tries each in turn; the first that answers is `request.auth`.
READ_AUTH = [Bearer(judged=True), without_bearer]
POST_AUTH = [Bearer(judged=False), presented_without_bearer]


def presented_token(request: HttpRequest) -> str | None:
    """The token a request presents, read as the API reads it (the MCP door's own
    transport judges it)."""
    return (POST_AUTH[0](request) or presented_without_bearer(request)).token
