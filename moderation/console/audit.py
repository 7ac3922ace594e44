"""The audit page: the log, newest first, and lifting a login lock."""


from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from moderation import selectors
from moderation.access import throttling
from moderation.console.forms import (
    AuditFilterForm,
    LoginUnlockForm,
)
from moderation.console.keyset import keyset_page
from moderation.console.page import PAGE_SIZE, console, form_errors, operator_name, render_page


@require_GET
@console()
def audit(request: HttpRequest) -> HttpResponse:
    actors, actions = selectors.audit_filter_choices()
    form = AuditFilterForm(request.GET or None, actors=actors, actions=actions)
    filters = form.cleaned_data if form.is_valid() else {}
    events = selectors.audit_events(
        actor=filters.get("actor", ""), action=filters.get("action", "")
    )
    page = keyset_page(events, key=("created_at", "id"), asked=request.GET, size=PAGE_SIZE)
    return render_page(request, "moderation/audit.html", {"form": form, "page": page})


@require_POST
@console("administer")
def audit_page_login_unlock(request: HttpRequest) -> HttpResponse:
    form = LoginUnlockForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing unlocked. {form_errors(form)}")
        return redirect("console:audit")
    data = form.cleaned_data
    throttling.login_unlock(
        actor=operator_name(request), username=data["username"], address=data["address"] or "",
        reason=data["reason"],
    )
    what = " and ".join(part for part in (data["username"], data["address"]) if part)
    messages.success(request, f"Unlocked logins for {what}.")
    return redirect("console:audit")
