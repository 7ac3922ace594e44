"""The tokens page: issue (shown once), list and revoke agent tokens."""


from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from moderation import actions, selectors
from moderation.console.forms import (
    TokenIssueForm,
    TokenRevokeForm,
)
from moderation.console.page import console, form_errors, operator_name, render_page


def _tokens_page(request: HttpRequest, **context) -> HttpResponse:
    context.setdefault("issue_form", TokenIssueForm())
    return render_page(
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
def tokens_page_issue(request: HttpRequest) -> HttpResponse:
    """The token is in this response's body only: not in a message, a cookie or a redirect."""
    form = TokenIssueForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No token issued. {form_errors(form)}")
        return _tokens_page(request, issue_form=form)
    principal, token = actions.token_issue(
        actor=operator_name(request),
        name=form.cleaned_data["name"],
        hourly_limit=form.cleaned_data["hourly_limit"],
    )
    messages.success(request, f"Token issued for {principal.name}. Copy it now.")
    response = _tokens_page(request, issued_for=principal, issued_token=token)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@console("administer")
def tokens_page_revoke(request: HttpRequest) -> HttpResponse:
    form = TokenRevokeForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing revoked. {form_errors(form)}")
        return redirect("console:tokens")
    name = form.cleaned_data["name"]
    try:
        revoked = actions.token_revoke(
            actor=operator_name(request), name=name, reason=form.cleaned_data["reason"]
        )
    except actions.UnknownAgent as refused:
        messages.error(request, f"Nothing revoked: {refused}.")
        return redirect("console:tokens")
    messages.success(request, f"Revoked {revoked} token{'' if revoked == 1 else 's'} of {name}.")
    return redirect("console:tokens")
