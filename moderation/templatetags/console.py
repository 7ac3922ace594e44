from datetime import UTC, date, datetime, time

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def utc(value: datetime | date | None):
    """A time as UTC text, with UTC on hover; the console's script shows it in local time.

    A bare date (a tombstone keeps its expiry as a day, rounded up) means the start of
    that day in UTC, which is when it stops holding, so it is shown as that instant.
    """
    if value is None:
        return "—"
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.min, tzinfo=UTC)
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


@register.filter
def readable(value) -> str:
    """An audit detail's value in words: `purge-a, purge-b` for a list, `not set` for
    nothing, `yes`/`no`; never a Python repr such as `['purge-a']` or `None`."""
    if value is None or value == "":
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(readable(item) for item in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{key}: {readable(item)}" for key, item in value.items()) or "none"
    return str(value)


@register.filter
def words(key: str) -> str:
    """A details key as words: `hourly_limit` reads `hourly limit`."""
    return str(key).replace("_", " ")


@register.filter
def age(value) -> str:
    """How long ago, in the two largest units: `42 s`, `5 min`, `3 h 10 min`, `2 d 4 h`."""
    if value is None:
        return "—"
    seconds = max(int(value.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 3600:
        return f"{minutes} min"
    if seconds < 86400:
        return f"{hours} h {minutes % 60} min"
    return f"{days} d {hours % 24} h"


@register.filter
def counted(count, noun: str) -> str:
    """A count with its noun in the right number: a job's counts are keyed by the plural
    (`threads`, `entries`, `audit_events`), so 1 reads `1 thread`, 3 read `3 entries`."""
    noun = str(noun).replace("_", " ")
    if count == 1:
        if noun.endswith("ies"):
            noun = noun[:-3] + "y"
        elif noun.endswith("s"):
            noun = noun[:-1]
    return f"{count} {noun}"


# A name or id up to this long never breaks: it fits a phone's line whole.
UNBROKEN_UP_TO = 24


@register.filter
def unbroken(value) -> str:
    """A name or identifier (an agent, an endpoint, an action, a delivery id, a URL) that
    no narrow column breaks mid-word: one up to 24 characters stays on one line
    (`my-agent`, `delivery_mark_failed`, `blackhole`); a longer one (an 80-character
    endpoint name, a UUID, a URL), which may not fit a phone's line, may break where it
    must. The text itself is unchanged, so it reads and copies whole."""
    text = "" if value is None else str(value)
    kind = "unbroken" if len(text) <= UNBROKEN_UP_TO else "breakable"
    return format_html('<span class="{}">{}</span>', kind, text)


@register.filter
def wrapping(value) -> str:
    """The class `unbroken` gives a cell whose whole content is one name or id, so the
    cell's own markup stays `<td ...>name</td>`: `unbroken` or `breakable`."""
    text = "" if value is None else str(value)
    return "unbroken" if len(text) <= UNBROKEN_UP_TO else "breakable"
