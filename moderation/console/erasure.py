"""The console's doors onto erasure (SPEC 8.4) and the retention page's forecast (8.3):
they read a form, call `moderation.erasure` or `maintenance.forecast`, and answer."""

from datetime import date, datetime

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods
from kombu.exceptions import KombuError

from board.models import Principal
from board.retention.moments import aware_moment
from maintenance import forecast
from maintenance.models import PurgeForecast
from moderation import erasure, selectors
from moderation.console import charts
from moderation.console.forms import REASON_MAX
from moderation.console.page import console, operator_name, render_page
from moderation.models import Erasure

REFRESH_SECONDS = 2


class EraseForm(forms.Form):
    name = forms.CharField(max_length=80)
    reason = forms.CharField(max_length=REASON_MAX, strip=True)
    since = forms.CharField(required=False, strip=True)
    revoke_tokens = forms.BooleanField(required=False)

    def clean_since(self) -> datetime | None:
        text = self.cleaned_data["since"]
        if not text:
            return None
        try:
            return aware_moment(text)
        except ValueError as problem:
            raise forms.ValidationError(
                f"Since: {text[:40]!r} {problem} (e.g. 2026-05-01T00:00Z)."
            ) from None


class EraseAskForm(EraseForm):
    """The tokens page's `Erase entries`: the confirmation page asks for a missing reason."""

    reason = forms.CharField(max_length=REASON_MAX, strip=True, required=False)


def _refused(form: EraseForm) -> str:
    return " ".join(str(e) for field in form.errors.values() for e in field)


def erase_confirmation(request: HttpRequest) -> dict | HttpResponse:
    """What an erase would delete now (through the service that `erase --dry-run` calls,
    counted up to the console's bound: "more than 10,000" past it), for the page that
    asks before anything is erased; or a redirect with a message when there is nothing
    to ask about (an unknown agent, a bad `since`). The reason may still be empty: the
    page asks for it."""
    asked = request.GET if request.method == "GET" else request.POST
    form = EraseAskForm(asked)
    if not form.is_valid():
        messages.error(request, f"Nothing erased. {_refused(form)}")
        return redirect("console:tokens")
    data = form.cleaned_data
    try:
        counts = erasure.erasure_preview(name=data["name"], since=data["since"], bounded=True)
    except erasure.ErasureRefused as refusal:
        messages.error(request, f"Nothing erased: {refusal}.")
        return redirect("console:tokens")
    principal = Principal.objects.get(name=data["name"])
    return {
        "principal": principal,
        "counts": counts,
        "since": data["since"],
        "since_text": asked.get("since", "").strip(),
        "reason": asked.get("reason", "").strip()[:REASON_MAX],
        "revoke_tokens": data["revoke_tokens"],
        "live_tokens": principal.tokens.filter(revoked_at__isnull=True).count(),
        "running": Erasure.objects.filter(
            principal=principal, state=Erasure.State.RUNNING
        ).first(),
    }


def erase_start(request: HttpRequest, *, actor: str) -> HttpResponse:
    form = EraseForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing erased. {_refused(form)}")
        return redirect("console:tokens")
    data = form.cleaned_data
    try:
        started, created = erasure.erasure_start(
            actor=actor, name=data["name"], reason=data["reason"], since=data["since"],
            revoke_tokens=data["revoke_tokens"],
        )
    except erasure.ErasureRefused as refusal:
        messages.error(request, f"Nothing erased: {refusal}.")
        return redirect("console:tokens")
    from moderation.tasks import erasure_run

    try:
        erasure_run.delay(started.pk)
    except KombuError as error:
        # Recorded and audited already: the resume job hands it to a worker later.
        messages.error(request, f"The broker failed ({type(error).__name__}); the erasure "
                       "is recorded and will be resumed.")
    if not created:
        messages.info(request, f"An erasure of {data['name']} was already running: this is it.")
    return redirect("console:erasure", erasure_id=started.pk)


def erasure_page_context(erasure_id: int) -> dict:
    return {
        "erasure": get_object_or_404(Erasure.objects.select_related("principal"), pk=erasure_id),
        "refresh_seconds": REFRESH_SECONDS,
        "count_bound": f"{selectors.COUNT_BOUND:,}",
    }


def retention_context(*, recorded: PurgeForecast | None) -> dict:
    """The last recorded forecast (`recorded`, never a dry run run here: SPEC 8.3), the
    expiry chart, the recent runs and the erasures."""
    now = timezone.now()
    days = [(date.fromisoformat(day), n) for day, n in recorded.expiring] if recorded else []
    expiring = sum(n for _, n in days)
    recent = []
    for job, runs in forecast.recent_runs().items():
        points = [
            (f"{run.started_at:%Y-%m-%d %H:%M} UTC: {run.duration_seconds or 0:.3f} s, "
             f"removed {forecast.removed_count(job=job, counts=run.counts)}",
             run.duration_seconds or 0.0)
            for run in runs
        ]
        recent.append({
            "name": job,
            "runs": list(reversed(runs)),
            "chart": charts.labelled_bar_chart(
                points,
                first_label=f"{runs[0].started_at:%b %d %H:%M}" if runs else "",
                last_label=f"{runs[-1].started_at:%b %d %H:%M}" if runs else "",
                slots=charts.RUN_SLOTS,
            ),
            "summary": (
                f"Durations in seconds of the last run of {job}." if len(runs) == 1
                else f"Durations in seconds of the last {len(runs)} runs of {job}."
            ),
        })
    return {
        "forecast": forecast_rows(recorded.jobs) if recorded else None,
        "forecast_bound": f"{forecast.FORECAST_BOUND:,}",
        "forecast_measured_at": recorded.measured_at if recorded else None,
        "forecast_age": now - recorded.measured_at if recorded else None,
        "forecast_took": recorded.duration_seconds if recorded else None,
        "expiring_chart": charts.labelled_bar_chart(
            [(f"{day:%Y-%m-%d}: {n} receipt{'' if n == 1 else 's'}", n) for day, n in days],
            first_label=f"{days[0][0]:%b %d}", last_label=f"{days[-1][0]:%b %d}",
        ) if days else None,
        "expiring_summary": (
            f"{expiring} receipt{' expires' if expiring == 1 else 's expire'} in the 30 days "
            f"after {recorded.measured_at:%Y-%m-%d %H:%M} UTC, when the forecast was last "
            "measured. Hover a bar for its day."
        ) if recorded else "Not yet measured: the forecast job records it.",
        "recent": recent,
        "erasures": list(Erasure.objects.select_related("principal")[:20]),
    }


def forecast_rows(jobs: dict[str, dict]) -> list[dict]:
    """Each job's recorded forecast in the page's words (SPEC 8.3, 11.7): a count the job
    stopped at its bound is "more than" the bound; what a hold keeps back is a number,
    "at least" one, or "not counted" (maintenance/forecast.py says when)."""
    rows = []
    for job, numbers in jobs.items():
        bounded = numbers.get("bounded", False)
        held = numbers["held"]
        rows.append({
            "job": job,
            "removed": f"more than {numbers['bound']:,}" if bounded
            else f"{numbers['removed']:,}",
            "held": "not counted" if held is None
            else f"at least {held:,}" if numbers.get("held_at_least") else f"{held:,}",
            "bounded": bounded,
            "counts": numbers["counts"],
        })
    return rows


@require_http_methods(["GET", "POST"])
@console("administer")
def erase(request: HttpRequest) -> HttpResponse:
    """GET, or POST with `step=confirm` (the tokens page's `Erase entries`, carrying what
    was typed there), asks for confirmation with what would be erased; any other POST
    starts the erasure. As with deleting one entry, nothing irreversible is one click."""
    if request.method == "GET" or request.POST.get("step") == "confirm":
        asked = erase_confirmation(request)
        if isinstance(asked, HttpResponse):
            return asked
        return render_page(request, "moderation/erase_confirm.html", asked)
    return erase_start(request, actor=operator_name(request))


@require_GET
@console()
def erasure_progress(request: HttpRequest, erasure_id: int) -> HttpResponse:
    return render_page(request, "moderation/erasure.html", erasure_page_context(erasure_id))
