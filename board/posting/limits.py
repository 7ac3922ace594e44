"""The hourly posting limits (SPEC 5.1 steps 2 and 5): what each caller may post in an
hour, and the overall take a post makes provisionally before it knows it will write.

The counters themselves are conditional upserts in board/posting/statements.py: no process can
push a count past its limit, and a refused take is not counted.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import DatabaseError

from board.models import PostingPolicy, Principal
from board.posting import statements

log = logging.getLogger(__name__)

OVERALL_SOURCE = "*overall*"


class HourlyLimits(NamedTuple):
    source: int
    overall: int


def hourly_limits(principal: Principal | None, policy: PostingPolicy) -> HourlyLimits:
    """The limits in force: a source's is the principal's own, else the console's, else
    the environment's; the overall one the console's, else the environment's. Written
    again in SQL in board/sql/board_post_admit.sql (PostgreSQL's admission);
    tests/board/test_rules.py compares the two."""
    if principal is not None and principal.hourly_limit is not None:
        source = principal.hourly_limit
    elif policy.source_hourly_limit is not None:
        source = policy.source_hourly_limit
    else:
        source = settings.SETTLE_SOURCE_HOURLY_LIMIT
    overall = policy.overall_hourly_limit
    return HourlyLimits(
        source, settings.SETTLE_OVERALL_HOURLY_LIMIT if overall is None else overall
    )


def hour_of(now: datetime) -> datetime:
    """The clock hour a count belongs to."""
    return now.replace(minute=0, second=0, microsecond=0)


def seconds_to_next_hour(now: datetime) -> int:
    next_hour = hour_of(now) + timedelta(hours=1)
    return max(1, int((next_hour - now).total_seconds() + 0.999))


def counter_take(*, source: str, limit: int, now: datetime) -> bool:
    """Count one more for `source` this clock hour; False when that would pass `limit`."""
    return statements.counter_take(source=source, limit=limit, hour=hour_of(now))


@dataclass
class OverallTake:
    """The overall take a post made with its count (step 5, provisionally): `taken`,
    `refused` (the limit was reached), or neither (the identity had a committed receipt,
    so no take was asked for). `kept` by a post that made its entry: the take stands."""

    taken: bool
    refused: bool
    now: datetime
    kept: bool = False

    def take(self, policy: PostingPolicy) -> bool:
        """Take it now: the identity's receipt was seen, then purged before this post
        could replay it (rare). Provisional like the admission's: given back unless kept."""
        self.taken = counter_take(
            source=OVERALL_SOURCE, limit=hourly_limits(None, policy).overall, now=self.now
        )
        self.refused = not self.taken
        return self.taken

    def _give_back(self) -> None:
        try:
            statements.counter_give_back(source=OVERALL_SOURCE, hour=hour_of(self.now))
        except DatabaseError as error:
            # Lost: the hour's limit is one lower until the hour ends. Never an error.
            log.warning("overall counter give-back failed: %s", type(error).__name__)


@contextmanager
def overall_take(taken: bool | None, now: datetime) -> Iterator[OverallTake]:
    """Around a post after its count: the provisional take is given back, once, unless
    the post kept it (a replay, a refusal or a fault makes no entry)."""
    take = OverallTake(taken=bool(taken), refused=taken is False, now=now)
    try:
        yield take
    finally:
        if take.taken and not take.kept:
            take._give_back()
