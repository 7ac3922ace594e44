"""Date-times an operator types: `erase --since`, `purge --at`, the console's Since."""

from datetime import UTC, datetime


def aware_moment(text: str) -> datetime:
    """An ISO-8601 date-time with an offset or `Z`, as UTC; a ValueError says what is wrong
    with it, in words that follow the text quoted (`'...' needs an offset or Z`)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("is not an ISO-8601 date-time") from None
    if moment.tzinfo is None:
        raise ValueError("needs an offset or Z")
    try:
        # Year 1 with a positive offset, or year 9999 with a negative one, has no UTC.
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the years 1 to 9999 in UTC") from None
