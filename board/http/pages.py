"""Public HTML pages: every `url` an entry carries opens here.

A thread page shows at most `REPLIES_PAGE_SIZE` replies, oldest first, on keyset pages
like the API's replies page (`?cursor=` continues after a reply, `?before=` goes back
from one). A reply's `url` is `/threads/<question id>#reply-<id>` (SPEC 5.1), and a
fragment never reaches the server, so the page also answers `?from=<reply id>` with the
page that starts at that reply, and a few lines of script on the page send a
`#reply-<id>` that is not on it there. Without script the links onward still reach it.
"""

import functools
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from board import selectors
from board.entries.cursors import bookmark_cursor, decode_cursor, encode_cursor
from board.exceptions import BoardError
from board.posting.callers import address_source, client_address
from board.serving import replicas

PAGE_SIZE = 50
REPLIES_PAGE_SIZE = 50


FAVICON = Path(__file__).resolve().parents[2] / "static" / "favicon.svg"


def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for whatever a page links: Settle's icon."""
    response = HttpResponse(FAVICON.read_bytes(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response


def _public_page(*, by_name: bool):
    """A public page read on a fit replica (board/serving/replicas.py); a page has no
    token, so its reader is its address's source."""

    def decorate(view):
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            source = address_source(client_address(request))
            return replicas.replica_read(
                functools.partial(view, request, *args, **kwargs), source=source,
                by_name=by_name,
            )

        return wrapper

    return decorate


@_public_page(by_name=False)
def thread_index(request: HttpRequest) -> HttpResponse:
    try:
        page = selectors.thread_list(cursor=request.GET.get("cursor"), limit=PAGE_SIZE)
    except BoardError:
        raise Http404("no such page") from None
    return render(request, "board/thread_index.html", {"page": page})


@_public_page(by_name=True)
def thread_detail(request: HttpRequest, thread_id: int) -> HttpResponse:
    try:
        thread = selectors.thread_get(thread_id=thread_id)
        replies, earlier, later = _replies_page(request, thread_id)
    except BoardError:
        raise Http404("no such thread or page") from None
    public = selectors.public_entries().filter(parent_id=thread_id)
    first = public.filter(id__lt=replies[0].pk).count() + 1 if replies else 0
    return render(
        request,
        "board/thread_detail.html",
        {
            "thread": thread,
            "replies": replies,
            "first_number": first,
            "last_number": first + len(replies) - 1,
            "earlier_cursor": earlier,
            "later_cursor": later,
            "starts_at": request.GET.get("from", ""),
        },
    )


def _replies_page(request: HttpRequest, thread_id: int) -> tuple[list, str | None, str | None]:
    """One page of public replies and the cursors of the pages before and after it.

    `from` (a reply id) and `cursor` both go forward from a point; `before` goes back.
    A reply id that is not public (hidden, deleted, purged) starts the page at the next
    public one, so an old link still lands as near as it can.
    """
    public = selectors.public_entries().filter(parent_id=thread_id)
    starts_at, before = request.GET.get("from"), request.GET.get("before")
    if starts_at is not None:
        cursor = bookmark_cursor(_reply_id(starts_at))
    else:
        cursor = request.GET.get("cursor")
    if before is not None:
        newest_first = public.filter(id__lt=decode_cursor(before)).order_by("-id")
        rows = list(newest_first[: REPLIES_PAGE_SIZE + 1])
        replies = rows[:REPLIES_PAGE_SIZE][::-1]
        earlier = encode_cursor(replies[0].pk) if len(rows) > REPLIES_PAGE_SIZE else None
        later = encode_cursor(replies[-1].pk) if replies else None
        has_later = replies and public.filter(id__gt=replies[-1].pk).exists()
        return replies, earlier, later if has_later else None
    page = selectors.reply_list(thread_id=thread_id, cursor=cursor, limit=REPLIES_PAGE_SIZE)
    replies = page.items
    has_earlier = replies and public.filter(id__lt=replies[0].pk).exists()
    earlier = encode_cursor(replies[0].pk) if has_earlier else None
    return replies, earlier, page.next_cursor


def _reply_id(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise Http404("no such reply")
    return max(int(text), 1)
