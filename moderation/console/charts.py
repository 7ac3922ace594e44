"""A bar chart drawn on the server as inline SVG: readable without JavaScript or a CDN."""

from dataclasses import dataclass

from moderation.selectors import HourCount

WIDTH, HEIGHT = 720, 140
# The axis' words and figures are HTML beside the SVG (templates/moderation/_svg_chart.html):
# drawn inside it they scaled with the card, larger than the page's text at a desk and
# cut at its edges on a phone. The SVG holds the bars and the baseline only.
LEFT, BOTTOM, TOP = 0, 1, 2
# The runs chart keeps a slot for each of the last 30 runs: one run is one thin bar, not a
# block across the whole chart.
RUN_SLOTS = 30


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    left: int
    baseline: float
    top: int
    peak: int
    bars: list[Bar]
    first_label: str
    last_label: str
    total: int


def hourly_bar_chart(hours: list[HourCount]) -> BarChart:
    peak = max((h.count for h in hours), default=0)
    scale = (HEIGHT - BOTTOM - TOP) / peak if peak else 0
    slot = (WIDTH - LEFT) / max(len(hours), 1)
    baseline = HEIGHT - BOTTOM
    bars = [
        Bar(
            x=round(LEFT + i * slot + 1, 1),
            y=round(baseline - h.count * scale, 1),
            width=round(max(slot - 2, 1), 1),
            height=round(h.count * scale, 1),
            label=f"{h.hour:%Y-%m-%d %H}:00 UTC: {h.count} post{'' if h.count == 1 else 's'}",
        )
        for i, h in enumerate(hours)
    ]
    return BarChart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        baseline=baseline,
        top=TOP,
        peak=peak,
        bars=bars,
        first_label=f"{hours[0].hour:%b %d %H}:00 UTC" if hours else "",
        last_label=f"{hours[-1].hour:%b %d %H}:00 UTC" if hours else "",
        total=sum(h.count for h in hours),
    )


def labelled_bar_chart(
    points: list[tuple[str, float]], *, first_label: str, last_label: str, slots: int = 1
) -> BarChart:
    """A bar per (label, value), drawn like the dashboard's: the retention page's
    receipts expiring per day and purge run durations. At least `slots` slots wide, so a
    few points stay bars of the width many would have."""
    peak = max((value for _, value in points), default=0)
    scale = (HEIGHT - BOTTOM - TOP) / peak if peak else 0
    slot = (WIDTH - LEFT) / max(len(points), slots, 1)
    baseline = HEIGHT - BOTTOM
    bars = [
        Bar(
            x=round(LEFT + i * slot + 1, 1),
            y=round(baseline - value * scale, 1),
            width=round(max(slot - 2, 1), 1),
            height=round(value * scale, 1),
            label=label,
        )
        for i, (label, value) in enumerate(points)
    ]
    return BarChart(
        width=WIDTH, height=HEIGHT, left=LEFT, baseline=baseline, top=TOP,
        peak=round(peak, 3) if isinstance(peak, float) else peak, bars=bars,
        first_label=first_label, last_label=last_label,
        total=round(sum(value for _, value in points), 3),
    )
