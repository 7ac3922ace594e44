"""The operator console (SPEC 7). Views translate: they check access, read a form, call
one service or selector and answer with a page or a redirect and a message. The rules
(who may, what is audited, what a deletion removes) live in `moderation.services`,
`moderation.access` and the owning apps."""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from board import services as board
from board.models import Entry
from board.posting import limits
from board.retention import holds
from moderation import charts, erasure_views, selectors, services
from moderation.access import access_for
from moderation.forms import (
    REASON_MAX,
    AuditFilterForm,
    EntryFilterForm,
    LimitsForm,
    LoginUnlockForm,
    LookupForm,
    ReasonForm,
    TokenIssueForm,
    TokenRevokeForm,
)

PAGE_SIZE = 50

def console(capability: str = "read"):
    """Staff only; `capability` (read, moderate, administer) decides who may call the view.

    Anyone not logged in as staff is sent to the login page; staff without the capability
    get 403. Console pages are never cached: they show tokens and moderation state.
    """

    def decorate(view):
        @wraps(view)
        @never_cache
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            access = access_for(request.user)
            if not access.read:
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            if not getattr(access, capability):
                raise PermissionDenied(f"your account may not {capability} in the console")
            request.console_access = access
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


def _operator(request: HttpRequest) -> str:
    return request.user.get_username()


def _page(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    return render(
        request, template, {"access": request.console_access, **context}, status=status
    )


def _form_errors(form) -> str:
    return "; ".join(
        f"{form.fields[name].label or name}: {' '.join(errors)}" if name in form.fields
        else " ".join(errors)
        for name, errors in form.errors.items()
    )


# --- Login -------------------------------------------------------------------------------


class LoginView(auth_views.LoginView):
    # The admin's form refuses accounts that are not staff, with a clear message.
    authentication_form = AdminAuthenticationForm
    template_name = "moderation/login.html"
    redirect_authenticated_user = True
    next_page = reverse_lazy("console:dashboard")


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("console:login")


# --- Dashboard ---------------------------------------------------------------------------


@require_GET
@console()
def dashboard(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    counts = selectors.attempt_counts(now=now)
    chart = charts.hourly_bar_chart(selectors.posts_per_hour(now=now))
    rows = [
        ("New", "new"),
        ("Replayed", "replayed"),
        ("Conflicts", "conflicts"),
        ("Rate-limited", "rate_limited"),
        ("Unknown delivery outcomes", "unknown_deliveries"),
    ]
    return _page(
        request,
        "moderation/dashboard.html",
        {
            "policy": board.posting_policy_current(),
            "counts": [
                (label, getattr(counts["hour"], key), getattr(counts["day"], key))
                for label, key in rows
            ],
            "chart": chart,
            "chart_summary": (
                f"{chart.total} post{'' if chart.total == 1 else 's'} in 48 hours; the busiest "
                f"hour had {chart.peak}. Hover a bar for its hour."
            ),
            "deliveries": selectors.delivery_counts(),
            "now": now,
        },
    )


# --- Posting -----------------------------------------------------------------------------


@require_GET
@console()
def posting(request: HttpRequest) -> HttpResponse:
    policy = board.posting_policy_current()
    return _page(
        request,
        "moderation/posting.html",
        {
            "policy": policy,
            "reason_form": ReasonForm(),
            "limits_form": LimitsForm(
                initial={
                    "source_hourly_limit": policy.source_hourly_limit,
                    "overall_hourly_limit": policy.overall_hourly_limit,
                }
            ),
            "effective_source": limits.source_hourly_limit(None, policy),
            "effective_overall": limits.overall_hourly_limit(policy),
            "default_source": settings.SETTLE_SOURCE_HOURLY_LIMIT,
            "default_overall": settings.SETTLE_OVERALL_HOURLY_LIMIT,
        },
    )


@require_POST
@console("administer")
def posting_pause(request: HttpRequest) -> HttpResponse:
    return _posting_switch(request, services.posting_pause, "Posting is paused.")


@require_POST
@console("administer")
def posting_resume(request: HttpRequest) -> HttpResponse:
    return _posting_switch(request, services.posting_resume, "Posting is open again.")


def _posting_switch(request: HttpRequest, action, done: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing changed: a reason is required.")
    else:
        action(actor=_operator(request), reason=form.cleaned_data["reason"])
        messages.success(request, done)
    return redirect("console:posting")


@require_POST
@console("administer")
def posting_limits(request: HttpRequest) -> HttpResponse:
    form = LimitsForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Limits not changed. {_form_errors(form)}")
    else:
        services.posting_set_limits(
            actor=_operator(request),
            source_hourly_limit=form.cleaned_data["source_hourly_limit"],
            overall_hourly_limit=form.cleaned_data["overall_hourly_limit"],
            reason=form.cleaned_data["reason"],
        )
        messages.success(request, "Hourly limits saved.")
    return redirect("console:posting")


# --- Entries -----------------------------------------------------------------------------


@require_GET
@console()
def entries(request: HttpRequest) -> HttpResponse:
    form = EntryFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    found = selectors.entry_search(
        type=filters.get("type", ""),
        visibility=filters.get("visibility", ""),
        actor=filters.get("actor", ""),
        text=filters.get("q", ""),
        created_from=filters.get("created_from"),
        created_to=filters.get("created_to"),
        held_text=request.console_access.administer,
    )
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    request_ids = selectors.request_ids_for_entries(entry_ids=[entry.pk for entry in rows])
    return _page(
        request,
        "moderation/entries.html",
        {
            "form": form,
            "page": page,
            "rows": [(entry, request_ids.get(entry.pk)) for entry in rows],
            "here": request.get_full_path(),
        },
    )


@require_GET
@console()
def entry_thread(request: HttpRequest, entry_id: int) -> HttpResponse:
    try:
        thread = selectors.thread_for_console(entry_id=entry_id)
    except Entry.DoesNotExist:
        raise Http404("no entry has this id") from None
    return _page(
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
def entry_hide(request: HttpRequest, entry_id: int) -> HttpResponse:
    return _entry_action(request, entry_id, services.entry_hide, "hidden")


@require_POST
@console("moderate")
def entry_unhide(request: HttpRequest, entry_id: int) -> HttpResponse:
    return _entry_action(request, entry_id, services.entry_unhide, "visible again")


def _entry_action(request: HttpRequest, entry_id: int, action, done: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Entry {entry_id} not changed: a reason is required.")
        return _back(request, entry_id)
    try:
        action(actor=_operator(request), entry_id=entry_id, reason=form.cleaned_data["reason"])
    except Entry.DoesNotExist:
        messages.error(request, f"Entry {entry_id} not changed: it is deleted or does not exist.")
    else:
        messages.success(request, f"Entry {entry_id} is {done}.")
    return _back(request, entry_id)


@require_http_methods(["GET", "POST"])
@console("moderate")
def entry_delete(request: HttpRequest, entry_id: int) -> HttpResponse:
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
        return _page(
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
        services.entry_delete(
            actor=_operator(request), entry_id=entry_id, reason=form.cleaned_data["reason"]
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


# --- Operations --------------------------------------------------------------------------


@require_GET
@console()
def operations(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    form = LookupForm(request.GET or None)
    found = None
    if form.is_valid():
        found = selectors.operation_lookup(request_id=form.cleaned_data["request_id"], now=now)
    return _page(
        request,
        "moderation/operations.html",
        {
            "form": form,
            "found": found,
            "inbox": selectors.delivery_inbox(now=now),
            "here": request.get_full_path(),
            "now": now,
        },
    )


# --- Tokens ------------------------------------------------------------------------------


def _tokens_page(request: HttpRequest, **context) -> HttpResponse:
    context.setdefault("issue_form", TokenIssueForm())
    return _page(
        request,
        "moderation/tokens.html",
        {"principals": selectors.principals_with_tokens(), **context},
    )


@require_GET
@console()
def tokens(request: HttpRequest) -> HttpResponse:
    return _tokens_page(request)


@require_POST
@console("administer")
def token_issue(request: HttpRequest) -> HttpResponse:
    """The token is in this response's body only: not in a message, a cookie or a redirect."""
    form = TokenIssueForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No token issued. {_form_errors(form)}")
        return _tokens_page(request, issue_form=form)
    principal, token = services.token_issue(
        actor=_operator(request),
        name=form.cleaned_data["name"],
        hourly_limit=form.cleaned_data["hourly_limit"],
    )
    messages.success(request, f"Token issued for {principal.name}. Copy it now.")
    response = _tokens_page(request, issued_for=principal, issued_token=token)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@console("administer")
def token_revoke(request: HttpRequest) -> HttpResponse:
    form = TokenRevokeForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing revoked. {_form_errors(form)}")
        return redirect("console:tokens")
    name = form.cleaned_data["name"]
    try:
        revoked = services.token_revoke(
            actor=_operator(request), name=name, reason=form.cleaned_data["reason"]
        )
    except services.UnknownAgent as refused:
        messages.error(request, f"Nothing revoked: {refused}.")
        return redirect("console:tokens")
    messages.success(request, f"Revoked {revoked} token{'' if revoked == 1 else 's'} of {name}.")
    return redirect("console:tokens")


@require_http_methods(["GET", "POST"])
@console("administer")
def erase(request: HttpRequest) -> HttpResponse:
    """GET, or POST with `step=confirm` (the tokens page's `Erase entries`, carrying what
    was typed there), asks for confirmation with what would be erased; any other POST
    starts the erasure. As with deleting one entry, nothing irreversible is one click."""
    if request.method == "GET" or request.POST.get("step") == "confirm":
        asked = erasure_views.erase_confirmation(request)
        if isinstance(asked, HttpResponse):
            return asked
        return _page(request, "moderation/erase_confirm.html", asked)
    return erasure_views.erase_start(request, actor=_operator(request))


@require_GET
@console()
def erasure(request: HttpRequest, erasure_id: int) -> HttpResponse:
    return _page(request, "moderation/erasure.html", erasure_views.erasure_page_context(erasure_id))


# --- Audit -------------------------------------------------------------------------------


@require_GET
@console()
def audit(request: HttpRequest) -> HttpResponse:
    actors, actions = selectors.audit_filter_choices()
    form = AuditFilterForm(request.GET or None, actors=actors, actions=actions)
    filters = form.cleaned_data if form.is_valid() else {}
    events = selectors.audit_events(
        actor=filters.get("actor", ""), action=filters.get("action", "")
    )
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    return _page(request, "moderation/audit.html", {"form": form, "page": page})


@require_POST
@console("administer")
def login_unlock(request: HttpRequest) -> HttpResponse:
    form = LoginUnlockForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing unlocked. {_form_errors(form)}")
        return redirect("console:audit")
    data = form.cleaned_data
    services.login_unlock(
        actor=_operator(request), username=data["username"], address=data["address"] or "",
        reason=data["reason"],
    )
    what = " and ".join(part for part in (data["username"], data["address"]) if part)
    messages.success(request, f"Unlocked logins for {what}.")
    return redirect("console:audit")
