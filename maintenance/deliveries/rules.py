"""SPEC 9's rules as plain functions, read by the state machine (`Delivery`'s transitions)
and by the attempt: what an answer counts as, and when the schedule's next attempt is due.
Nothing here touches the database."""

import random
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings

# Retried like a 5xx: the receiver may accept the same notice later (SPEC 9's table).
RETRYABLE_4XX = {408, 409, 425, 429}
# A lookup that got no usable answer is tried again on the next run of the sweep.
LOOKUP_AGAIN_AFTER = timedelta(minutes=1)


class Answered(Protocol):
    """What an attempt came back with (`webhooks.ReceiverAnswer` is one)."""

    status_code: int | None
    request_left: bool
    retry_after: float | None


class Scheduled(Protocol):
    """What the schedule reads of a delivery (`Delivery` is one)."""

    attempts: int
    deadline_at: datetime


def schedule() -> list[timedelta]:
    return settings.SETTLE_DELIVERY_SCHEDULE


def jittered(delay: timedelta) -> timedelta:
    # ±20 %, so deliveries that failed together do not come back together.
    return delay * random.uniform(0.8, 1.2)


def answer_kind(answer: Answered) -> str:
    """ok, refused (a 4xx never retried), retry (answered or never sent), lost."""
    code = answer.status_code
    if code is None:
        return "lost" if answer.request_left else "retry"
    if 200 <= code < 300:
        return "ok"
    if 400 <= code < 500 and code not in RETRYABLE_4XX:
        return "refused"
    return "retry"


def next_due(delivery: Scheduled, now: datetime, retry_after: float | None) -> datetime | None:
    """When the next attempt of the schedule goes, or None when schedule or deadline
    has run out. `delivery.attempts` already counts the attempt that just ended."""
    steps = schedule()
    if delivery.attempts >= len(steps):
        return None
    delay = jittered(steps[delivery.attempts])
    if retry_after is not None:
        # Honoured when it fits the deadline; a receiver asking for more time than is
        # left is not sent to against its word, so the schedule has run out.
        if now + timedelta(seconds=retry_after) >= delivery.deadline_at:
            return None
        delay = max(delay, timedelta(seconds=retry_after))
    due = now + delay
    return due if due < delivery.deadline_at else None
