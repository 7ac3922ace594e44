"""The dashboard: posting state, the last hour's and day's counts, posts per hour."""


from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from board import services as board
from moderation import selectors
from moderation.console import charts
from moderation.console.page import console, render_page


@require_GET
@console()
def dashboard(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    figures = selectors.dashboard_figures(now=now)
    counts = figures.counts
    chart = charts.hourly_bar_chart(figures.hours)
    rows = [
        ("New", "new"),
        ("Replayed", "replayed"),
        ("Conflicts", "conflicts"),
        ("Rate-limited", "rate_limited"),
        ("Unknown delivery outcomes", "unknown_deliveries"),
    ]
    return render_page(
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
            "rolled_up_at": figures.rolled_up_at,
            "now": now,
        },
    )
