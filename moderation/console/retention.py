"""The retention page (SPEC 8 to 8.3): the jobs with their runs and forecast, the
policies (a principal's own entry retention too, from the tokens page) and the holds.
Administrators run purges, set and clear policies, place and release holds; everyone with
console access sees them. Views translate only."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from kombu.exceptions import KombuError

from board.retention import holds
from board.retention import policies as retention
from maintenance import forecast
from maintenance import selectors as maintenance
from moderation import actions
from moderation.console import erasure as erasure_pages
from moderation.console.forms import OptionalReasonForm
from moderation.console.page import console, operator_name, render_page

# Retentions fixed in code, not read from the environment: shown as words, so the page
# does not name a variable an operator could not set.
FIXED_RETENTIONS = {"SETTLE_AUDIT_RETENTION": "one year, fixed"}

MEANINGS = {
    retention.ENTRY: "How long an agent's retry of a new post replays its first answer "
    "(receipt_expires_at, fixed when the receipt is written: a change applies to receipts "
    "written after it).",
    retention.DELETION: "How long after a deletion a retry still answers 410 deleted from "
    "the receipt, before a tombstone replaces it (read at each purge).",
    retention.TOMBSTONE: "How long after a receipt expired an old request_id still answers "
    "410 instead of being unknown (applies to tombstones written after a change).",
    retention.ATTEMPT: "How long the per-attempt log is kept (read at each purge).",
    retention.DELIVERY: "How long settled outbound deliveries are kept (read at each purge).",
}


def policies_and_holds_context() -> dict:
    """What the retention page's policies and holds sections show."""
    overrides = retention.entry_overrides()
    policies = [
        {
            "name": name,
            "value": value,
            "words": retention.duration_words(value.seconds),
            "overrides": len(overrides) if name == retention.ENTRY else 0,
            "meaning": MEANINGS[name],
        }
        for name, value in retention.retention_current(fresh=True).items()
    ]
    active = list(holds.holds_active().order_by("id"))
    return {"policies": policies, "entry_overrides": overrides, "holds": [
        {"hold": hold, "covers": holds.hold_covers(hold),
         "covers_bound": f"{holds.COVERS_BOUND:,}"} for hold in active
    ]}


def _back(request: HttpRequest) -> HttpResponse:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("console:retention")


@require_POST
@console("administer")
def retention_page_policy(request: HttpRequest) -> HttpResponse:
    policy = request.POST.get("policy", "")
    principal = request.POST.get("principal", "").strip() or None
    try:
        if request.POST.get("action") == "clear":
            change = actions.retention_clear(
                actor=operator_name(request), policy=policy, principal=principal
            )
        else:
            seconds = retention.duration_parse(policy, request.POST.get("duration", ""))
            change = actions.retention_set(
                actor=operator_name(request), policy=policy, seconds=seconds, principal=principal
            )
    except retention.PolicyRefused as refused:
        messages.error(request, f"Nothing changed. {refused.console}")
    else:
        who = f" for {principal}" if principal else ""
        messages.success(
            request,
            f"{policy}{who}: {retention.duration_words(change.after.seconds)} "
            f"({change.after.source}), was {retention.duration_words(change.before.seconds)}.",
        )
    return _back(request)


@require_POST
@console("administer")
def retention_page_hold_add(request: HttpRequest) -> HttpResponse:
    thread = request.POST.get("thread", "").strip()
    principal = request.POST.get("principal", "").strip()
    try:
        # ASCII digits, as an entry id in a URL (board/http/pages.py): `²` is a digit to
        # str.isdigit() and not to int().
        if thread and not (thread.isascii() and thread.isdigit() and len(thread) <= 18):
            raise holds.HoldRefused(f"thread {thread[:20]!r}: not an id")
        hold = actions.hold_add(
            actor=operator_name(request), reason=request.POST.get("reason", ""),
            thread_id=int(thread) if thread else None, principal=principal or None,
        )
    except holds.HoldRefused as refused:
        messages.error(request, f"No hold placed. {refused.console}")
    else:
        messages.success(request, f"Hold {hold.pk} placed.")
    return _back(request)


@require_POST
@console("administer")
def retention_page_hold_release(request: HttpRequest, hold_id: int) -> HttpResponse:
    try:
        actions.hold_release(
            actor=operator_name(request), hold_id=hold_id, reason=request.POST.get("reason", "")
        )
    except holds.HoldRefused as refused:
        messages.error(request, f"Not released. {refused.console}")
    else:
        messages.success(request, f"Hold {hold_id} released.")
    return _back(request)


@require_GET
@console()
def retention_page(request: HttpRequest) -> HttpResponse:
    recorded = forecast.forecast_latest()
    overview = maintenance.retention_overview(timezone.now(), recorded=recorded)
    in_force = retention.retention_current(fresh=True)
    rows = [
        {
            "job": job,
            "keeps_for": FIXED_RETENTIONS.get(job.setting) or maintenance.describe_duration(
                job.retention
            ),
            "variable": "" if job.setting in FIXED_RETENTIONS else job.setting,
            # Where the value comes from: a value an administrator set is the console's,
            # and the variable is then only the default it replaced (SPEC 8.1).
            "source": _source(in_force, job.setting),
            # Only an interval job with no recorded run lacks a next run: beat sends it
            # within one interval of starting, which is all that can truly be said.
            "within": job.schedule.removeprefix("every "),
        }
        for job in overview.jobs
    ]
    return render_page(
        request,
        "moderation/retention.html",
        {
            "overview": overview,
            "rows": rows,
            **erasure_pages.retention_context(recorded=recorded),
            **policies_and_holds_context(),
        },
    )


def _source(in_force: dict[str, retention.InForce], setting: str) -> str:
    policy = retention.POLICY_OF_SETTING.get(setting)
    return in_force[policy].source if policy else ""


@require_POST
@console("administer")
def retention_page_run(request: HttpRequest) -> HttpResponse:
    form = OptionalReasonForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        jobs = actions.retention_run_now(actor=operator_name(request), reason=reason)
    except KombuError as error:  # the broker refused or is unreachable: nothing was queued
        messages.error(request, f"Nothing was queued: the broker failed ({type(error).__name__}).")
    else:
        messages.success(request, f"Queued {len(jobs)} purge jobs; the worker runs them next.")
    return redirect("console:retention")
