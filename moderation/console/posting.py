"""The posting page: pause and resume with a reason, the hourly limits."""


from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from board import services as board
from board.posting import limits
from moderation import actions
from moderation.console.forms import (
    LimitsForm,
    ReasonForm,
)
from moderation.console.page import console, form_errors, operator_name, render_page


@require_GET
@console()
def posting(request: HttpRequest) -> HttpResponse:
    policy = board.posting_policy_current()
    return render_page(
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
            "effective": limits.hourly_limits(None, policy),
            "default_source": settings.SETTLE_SOURCE_HOURLY_LIMIT,
            "default_overall": settings.SETTLE_OVERALL_HOURLY_LIMIT,
        },
    )


@require_POST
@console("administer")
def posting_page_pause(request: HttpRequest) -> HttpResponse:
    return _posting_switch(request, actions.posting_pause, "Posting is paused.")


@require_POST
@console("administer")
def posting_page_resume(request: HttpRequest) -> HttpResponse:
    return _posting_switch(request, actions.posting_resume, "Posting is open again.")


def _posting_switch(request: HttpRequest, action, done: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing changed: a reason is required.")
    else:
        action(actor=operator_name(request), reason=form.cleaned_data["reason"])
        messages.success(request, done)
    return redirect("console:posting")


@require_POST
@console("administer")
def posting_page_limits(request: HttpRequest) -> HttpResponse:
    form = LimitsForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Limits not changed. {form_errors(form)}")
    else:
        actions.posting_set_limits(
            actor=operator_name(request),
            source_hourly_limit=form.cleaned_data["source_hourly_limit"],
            overall_hourly_limit=form.cleaned_data["overall_hourly_limit"],
            reason=form.cleaned_data["reason"],
        )
        messages.success(request, "Hourly limits saved.")
    return redirect("console:posting")
