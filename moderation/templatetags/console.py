from datetime import UTC, datetime

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def utc(value: datetime | None):
    """A time as UTC text, with UTC on hover; the console's script shows it in local time."""
    if value is None:
        return "—"
    value = value.astimezone(UTC)
    return format_html(
        '<time datetime="{}" title="{} UTC">{} UTC</time>',
        value.isoformat(),
        value.strftime("%Y-%m-%d %H:%M:%S"),
        value.strftime("%Y-%m-%d %H:%M"),
    )


@register.filter
def duration(value):
    """A timedelta as words: `30 days`, `2 hours`."""
    from maintenance.selectors import describe_duration

    return describe_duration(value) if value is not None else "—"
