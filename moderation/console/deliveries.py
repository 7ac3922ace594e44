"""The console's deliveries page and its actions (SPEC 7 and 9).

Administrators act, everyone else in the console reads. Views translate only: each
action calls one audited wrapper in `moderation.actions` (the rules are
`maintenance.deliveries`'), turns a refusal (`DeliveryRefused`, or a missing reason) into
a message, and changes nothing then. Secrets appear once, in the body of the POST that
made them, under `Cache-Control: no-store`. Endpoint URLs are shown whole to
administrators only; anyone else sees scheme and host (webhook URLs often carry secrets).
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from maintenance.deliveries import selectors as delivery_selectors
from maintenance.deliveries.endpoints import endpoint_display_url
from maintenance.exceptions import DeliveryRefused
from moderation import actions, selectors
from moderation.console.forms import (
    DeliveryFilterForm,
    EndpointActionForm,
    EndpointAddForm,
    OptionalReasonForm,
)
from moderation.console.keyset import keyset_page
from moderation.console.page import PAGE_SIZE, console, form_errors, operator_name, render_page


def _endpoint_rows(request: HttpRequest) -> list[dict]:
    full = request.console_access.administer
    return [
        {
            "overview": overview,
            "endpoint": overview.endpoint,
            "url": endpoint_display_url(overview.endpoint, full=full),
            "lookup_url": overview.endpoint.lookup_url if full else "",
        }
        for overview in delivery_selectors.endpoints_overview()
    ]


def inbox_context(request: HttpRequest, *, now, paged: bool) -> dict:
    """The unknown-outcome inbox for a page: `paged`, the page the query string names (the
    operations page), else its newest page (the deliveries page, whose query string pages
    its own list). Its size is exact up to INBOX_COUNTED_UP_TO, "more than" past it."""
    page = keyset_page(
        selectors.delivery_inbox(), key=("created_at", "id"), asked=request.GET if paged else {},
        size=PAGE_SIZE,
    )
    size = selectors.delivery_inbox_size()
    bound = selectors.INBOX_COUNTED_UP_TO
    return {
        "inbox": selectors.delivery_rows(page.rows, now=now),
        "inbox_page": page,
        "inbox_size": f"more than {bound:,}" if size > bound else f"{size:,}",
        "inbox_paged": paged,
    }


def _deliveries_page(request: HttpRequest, status: int = 200, **context) -> HttpResponse:
    now = timezone.now()
    endpoints = _endpoint_rows(request)
    names = [row["endpoint"].name for row in endpoints]
    form = DeliveryFilterForm(request.GET or None, endpoints=names)
    filters = form.cleaned_data if form.is_valid() else {}
    found = selectors.deliveries_listed(
        state=filters.get("state", ""), endpoint=filters.get("endpoint", "")
    )
    page = keyset_page(found, key=("created_at", "id"), asked=request.GET, size=PAGE_SIZE)
    context.setdefault("add_form", EndpointAddForm())
    return render_page(
        request,
        "moderation/deliveries.html",
        {
            "endpoints": endpoints,
            # The rates' rollup, as of its last run (every endpoint's row says the same).
            "rates_rolled_up_at": max(
                (row["overview"].rolled_up_at for row in endpoints
                 if row["overview"].rolled_up_at), default=None,
            ),
            "filter_form": form,
            "page": page,
            "rows": selectors.delivery_rows(page.rows, now=now),
            **inbox_context(request, now=now, paged=False),
            # After an add or a rotation (a POST) the actions come back to the page itself.
            "here": request.get_full_path() if request.method == "GET" else reverse(
                "console:deliveries"
            ),
            **context,
        },
        status=status,
    )


@require_GET
@console()
def deliveries(request: HttpRequest) -> HttpResponse:
    return _deliveries_page(request)


# --- Endpoints ---------------------------------------------------------------------------


def _with_secret(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@console("administer")
def deliveries_page_endpoint_add(request: HttpRequest) -> HttpResponse:
    """The secret is in this response's body only: not in a message, cookie or redirect."""
    form = EndpointAddForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No endpoint added. {form_errors(form)}")
        return _deliveries_page(request, add_form=form)
    data = form.cleaned_data
    try:
        endpoint, secret = actions.endpoint_add(
            actor=operator_name(request),
            name=data["name"],
            url=data["url"],
            supports=data["supports"],
            lookup_url=data["lookup_url"] or None,
            allow_private=data["allow_private"],
            reason=data["reason"],
        )
    except (DeliveryRefused, actions.ReasonRequired) as refused:
        messages.error(request, f"No endpoint added: {_words(refused)}.")
        return _deliveries_page(request, add_form=form)
    messages.success(request, f"Endpoint {endpoint.name} added. Copy its secret now.")
    return _with_secret(_deliveries_page(request, secret_for=endpoint, secret=secret))


@require_POST
@console("administer")
def deliveries_page_endpoint_disable(request: HttpRequest) -> HttpResponse:
    return _endpoint_action(request, actions.endpoint_disable, "disabled: its deliveries wait")


@require_POST
@console("administer")
def deliveries_page_endpoint_enable(request: HttpRequest) -> HttpResponse:
    return _endpoint_action(request, actions.endpoint_enable, "enabled: waiting deliveries resume")


def _endpoint_action(request: HttpRequest, action, done: str) -> HttpResponse:
    form = EndpointActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing changed. {form_errors(form)}")
        return redirect("console:deliveries")
    name = form.cleaned_data["name"]
    try:
        action(actor=operator_name(request), name=name, reason=form.cleaned_data["reason"])
    except DeliveryRefused as refused:
        messages.error(request, f"Nothing changed: {_words(refused)}.")
    else:
        messages.success(request, f"Endpoint {name} {done}.")
    return redirect("console:deliveries")


@require_POST
@console("administer")
def deliveries_page_endpoint_rotate(request: HttpRequest) -> HttpResponse:
    form = EndpointActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing changed. {form_errors(form)}")
        return redirect("console:deliveries")
    try:
        endpoint, secret = actions.endpoint_rotate(
            actor=operator_name(request),
            name=form.cleaned_data["name"],
            reason=form.cleaned_data["reason"],
        )
    except DeliveryRefused as refused:
        messages.error(request, f"Nothing changed: {_words(refused)}.")
        return redirect("console:deliveries")
    messages.success(
        request,
        f"New secret for {endpoint.name}; the previous one keeps signing beside it for "
        "24 hours. Copy it now.",
    )
    return _with_secret(_deliveries_page(request, secret_for=endpoint, secret=secret))


@require_POST
@console("administer")
def deliveries_page_endpoint_send_test(request: HttpRequest) -> HttpResponse:
    form = EndpointActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing sent. {form_errors(form)}")
        return redirect("console:deliveries")
    name = form.cleaned_data["name"]
    try:
        result = actions.endpoint_send_test(
            actor=operator_name(request), name=name, reason=form.cleaned_data["reason"]
        )
    except DeliveryRefused as refused:
        messages.error(request, f"Nothing sent: {_words(refused)}.")
        return redirect("console:deliveries")
    answer = (
        f"answered {result.status_code}" if result.status_code is not None
        else f"gave no answer ({result.error})"
    )
    text = f"Send test to {name}: {answer} in {result.duration_ms} ms."
    if result.lookup_answers_404 is not None:
        looked = result.lookup_status_code or result.lookup_error or "no answer"
        text += (
            " A lookup of an unknown id answered 404, as it should."
            if result.lookup_answers_404
            else f" A lookup of an unknown id answered {looked}; it should answer 404."
        )
    (messages.success if result.ok else messages.warning)(request, text)
    return redirect("console:deliveries")


# --- Deliveries --------------------------------------------------------------------------

DELIVERY_ACTIONS = {
    "reconcile": (actions.delivery_reconcile, "Reconciled"),
    "resend": (actions.delivery_resend, "Resent"),
    "cancel": (actions.delivery_cancel, "Cancel applied"),
    "mark-succeeded": (actions.delivery_mark, "Marked"),
    "mark-failed": (actions.delivery_mark, "Marked"),
}


@require_POST
@console("administer")
def deliveries_page_delivery_action(
    request: HttpRequest, delivery_id: str, action: str
) -> HttpResponse:
    call, done = DELIVERY_ACTIONS[action]
    form = OptionalReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Delivery {delivery_id} not changed. {form_errors(form)}")
        return _back(request)
    extra = {"state": action.removeprefix("mark-")} if action.startswith("mark-") else {}
    try:
        delivery = call(
            actor=operator_name(request),
            delivery_id=delivery_id,
            reason=form.cleaned_data["reason"],
            **extra,
        )
    except DeliveryRefused as refused:
        messages.error(request, f"Delivery {delivery_id} not changed: {_words(refused)}.")
    else:
        messages.success(request, f"{done}: delivery {delivery_id} is {delivery.state}.")
    return _back(request)


def _back(request: HttpRequest) -> HttpResponse:
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return redirect(target)
    return redirect("console:deliveries")


def _words(refused: Exception) -> str:
    """The refusal in the console's words (a command's names its flags)."""
    return str(
        getattr(refused, "console", None) or getattr(refused, "message", None) or refused
    ).rstrip(".")
