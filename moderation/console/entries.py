"""The entries page: list, filter and search entries, a thread, hide, unhide, delete."""


from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from board.models import Entry
from board.retention import holds
from board.selectors import SEARCH_MATCHES_SHOWN
from moderation import actions, selectors
from moderation.console.forms import (
    REASON_MAX,
    EntryFilterForm,
    ReasonForm,
)
from moderation.console.keyset import keyset_page
from moderation.console.page import PAGE_SIZE, console, operator_name, render_page


@require_GET
@console()
def entries(request: HttpRequest) -> HttpResponse:
    form = EntryFilterForm(request.GET or None)
    # A filter that does not read (a search shorter than SEARCH_MIN) is said and left out;
    # the others still apply.
    form.is_valid()
    filters = getattr(form, "cleaned_data", {})
    found = selectors.entry_search(
        type=filters.get("type", ""),
        visibility=filters.get("visibility", ""),
        actor=filters.get("actor", ""),
        text=filters.get("q", ""),
        created_from=filters.get("created_from"),
        created_to=filters.get("created_to"),
        held_text=request.console_access.administer,
    )
    page = keyset_page(found, key=("id",), asked=request.GET, size=PAGE_SIZE)
    rows = page.rows
    request_ids = selectors.request_ids_for_entries(entry_ids=[entry.pk for entry in rows])
    return render_page(
        request,
        "moderation/entries.html",
        {
            "form": form,
            "page": page,
            "rows": [(entry, request_ids.get(entry.pk)) for entry in rows],
            "here": request.get_full_path(),
            "searching": bool(filters.get("q")),
            "search_limit": f"{SEARCH_MATCHES_SHOWN:,}",
        },
    )


@require_GET
@console()
def entry_thread(request: HttpRequest, entry_id: int) -> HttpResponse:
    try:
        thread = selectors.thread_for_console(entry_id=entry_id)
    except Entry.DoesNotExist:
        raise Http404("no entry has this id") from None
    return render_page(
        request,
        "moderation/thread.html",
        {
            "thread": thread, "focus": entry_id, "here": request.get_full_path(),
            "thread_holds": holds.holds_on_thread(thread.question.pk),
        },
    )


def _back(request: HttpRequest, entry_id: int) -> HttpResponse:
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return redirect(target)
    return redirect("console:entry", entry_id=entry_id)


@require_POST
@console("moderate")
def entry_page_hide(request: HttpRequest, entry_id: int) -> HttpResponse:
    return _entry_action(request, entry_id, actions.entry_hide, "hidden")


@require_POST
@console("moderate")
def entry_page_unhide(request: HttpRequest, entry_id: int) -> HttpResponse:
    return _entry_action(request, entry_id, actions.entry_unhide, "visible again")


def _entry_action(request: HttpRequest, entry_id: int, action, done: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Entry {entry_id} not changed: a reason is required.")
        return _back(request, entry_id)
    try:
        action(actor=operator_name(request), entry_id=entry_id, reason=form.cleaned_data["reason"])
    except Entry.DoesNotExist:
        messages.error(request, f"Entry {entry_id} not changed: it is deleted or does not exist.")
    else:
        messages.success(request, f"Entry {entry_id} is {done}.")
    return _back(request, entry_id)


@require_http_methods(["GET", "POST"])
@console("moderate")
def entry_page_delete(request: HttpRequest, entry_id: int) -> HttpResponse:
    """GET, or POST with `step=confirm` (the `Delete` beside an entry, carrying the reason
    typed there), asks for confirmation; any other POST deletes."""
    entry = Entry.objects.filter(pk=entry_id).first()
    if entry is None:
        raise Http404("no entry has this id")
    confirming = request.method == "GET" or request.POST.get("step") == "confirm"
    if confirming or entry.deleted_at is not None:
        if entry.deleted_at is not None:
            messages.info(request, f"Entry {entry_id} is already deleted.")
            return redirect("console:entry", entry_id=entry_id)
        asked = request.GET if request.method == "GET" else request.POST
        return render_page(
            request,
            "moderation/entry_delete.html",
            {
                "entry": entry,
                "reason": asked.get("reason", "").strip()[:REASON_MAX],
                "next": asked.get("next", ""),
            },
        )
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Entry {entry_id} not deleted: a reason is required.")
        return redirect("console:entry-delete", entry_id=entry_id)
    try:
        actions.entry_delete(
            actor=operator_name(request), entry_id=entry_id, reason=form.cleaned_data["reason"]
        )
    except Entry.DoesNotExist:
        messages.info(request, f"Entry {entry_id} is already deleted.")
    else:
        kept = Entry.objects.filter(pk=entry_id).exclude(body="").exists()
        messages.success(request, (
            f"Entry {entry_id} is deleted: retries answer 410. "
            + ("A hold covers its thread: its text and actor are kept, for administrators "
               "only, until the hold is released." if kept else "Its text is gone.")
        ))
    return _back(request, entry_id)
