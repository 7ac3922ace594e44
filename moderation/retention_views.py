"""The retention page's policies and holds (SPEC 8.1, 8.2): administrators set and clear
policies (a principal's own entry retention too, from the tokens page) and place and
release holds; everyone with console access sees them. Views translate only."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from board import holds, retention
from moderation import services
from moderation.views import _operator, console

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
        {"hold": hold, "covers": holds.hold_covers(hold)} for hold in active
    ]}


def _back(request: HttpRequest) -> HttpResponse:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("console:retention")


@require_POST
@console("administer")
def retention_policy(request: HttpRequest) -> HttpResponse:
    policy = request.POST.get("policy", "")
    principal = request.POST.get("principal", "").strip() or None
    try:
        if request.POST.get("action") == "clear":
            change = services.retention_clear(
                actor=_operator(request), policy=policy, principal=principal
            )
        else:
            seconds = retention.duration_parse(policy, request.POST.get("duration", ""))
            change = services.retention_set(
                actor=_operator(request), policy=policy, seconds=seconds, principal=principal
            )
    except retention.PolicyRefused as refused:
        messages.error(request, f"Nothing changed. {refused}")
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
def hold_add(request: HttpRequest) -> HttpResponse:
    thread = request.POST.get("thread", "").strip()
    principal = request.POST.get("principal", "").strip()
    try:
        if thread and not thread.isdigit():
            raise holds.HoldRefused(f"thread {thread[:20]!r}: not an id")
        hold = services.hold_add(
            actor=_operator(request), reason=request.POST.get("reason", ""),
            thread_id=int(thread) if thread else None, principal=principal or None,
        )
    except holds.HoldRefused as refused:
        messages.error(request, f"No hold placed. {refused}")
    else:
        messages.success(request, f"Hold {hold.pk} placed.")
    return _back(request)


@require_POST
@console("administer")
def hold_release(request: HttpRequest, hold_id: int) -> HttpResponse:
    try:
        services.hold_release(
            actor=_operator(request), hold_id=hold_id, reason=request.POST.get("reason", "")
        )
    except holds.HoldRefused as refused:
        messages.error(request, f"Not released. {refused}")
    else:
        messages.success(request, f"Hold {hold_id} released.")
    return _back(request)
