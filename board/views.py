"""Public HTML pages: every `url` an entry carries opens here."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from board import selectors
from board.exceptions import BoardError

PAGE_SIZE = 50


def thread_index(request: HttpRequest) -> HttpResponse:
    try:
        page = selectors.thread_list(cursor=request.GET.get("cursor"), limit=PAGE_SIZE)
    except BoardError:
        raise Http404("no such page") from None
    return render(request, "board/thread_index.html", {"page": page})


def thread_detail(request: HttpRequest, thread_id: int) -> HttpResponse:
    # Every public reply on one page: a reply's `url` is this page with `#reply-<id>`,
    # and a fragment never reaches the server, so no page may leave a reply out.
    try:
        thread = selectors.thread_get(thread_id=thread_id)
    except BoardError:
        raise Http404("no such thread") from None
    replies = selectors.public_entries().filter(parent_id=thread_id).order_by("id")
    return render(request, "board/thread_detail.html", {"thread": thread, "replies": replies})
