"""Failed logins are throttled (SPEC 7.1), by django-axes configured to Settle's addressing.

- Every door that checks a password (`/console/login/`, `/admin/login/`) goes through
  `django.contrib.auth.authenticate`, where `axes.backends.AxesStandaloneBackend` comes
  first: a locked username or address is refused there, before any password is checked.
  A wrong second-factor code is reported the same way (`login_failure_report`), so it
  counts against the same username.
- The address is SPEC 4's (`board.posting.callers.client_address`): `X-Forwarded-For` is believed
  only from a peer in SETTLE_TRUSTED_PROXIES, so a forged header changes nothing and two
  operators behind one trusted proxy are counted apart. IPv6 is grouped by its /64, as
  the API's rate limit does.
- Axes compares one number with one limit; the contract has two (5 for a username, 20
  for an address). `SettleAxesHandler.get_failures` answers the limit while either lock
  is on, and 0 otherwise.
- Failures are counted in a sliding window, one row each: axes' failure log
  (`AccessFailureLog`, AXES_ENABLE_ACCESS_FAILURE_LOG). A lock starts at the failure
  that makes 5 for a username (20 for an address) within 15 minutes, and ends 15 minutes
  after it. Axes' own count (one row per username, address and user agent, alive while
  its last failure is younger than the cool-off) never forgets failures that keep coming
  less than 15 minutes apart: five failures eight minutes apart locked. Failures during
  a lock are refused and not logged, so they neither count nor prolong it.
- Failures, locks and unlocks are audit events (`login_failed`, `login_locked`,
  `login_unlocked`) with the username tried and the address, never the password.
"""

import ipaddress
import math
from datetime import datetime, timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username
from axes.models import AccessFailureLog
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from board.posting.callers import client_address

USERNAME_LIMIT = 5
ADDRESS_LIMIT = 20
COOL_OFF = timedelta(minutes=15)


def login_address(request: HttpRequest) -> str:
    """The address a login failure counts against: SPEC 4's client address, IPv6 by /64.

    A forwarded hop that is not an address (a trusted proxy wrote `unknown`) counts
    against the proxy itself: axes stores an IP address, and nothing better is known.
    """
    remote = request.META.get("REMOTE_ADDR", "") or "0.0.0.0"
    for candidate in (client_address(remote, request.headers.get("X-Forwarded-For")), remote):
        try:
            parsed = ipaddress.ip_address(candidate.strip("[]"))
        except ValueError:
            continue
        if isinstance(parsed, ipaddress.IPv6Address):
            if parsed.ipv4_mapped:
                return str(parsed.ipv4_mapped)
            return str(ipaddress.ip_network(f"{parsed}/64", strict=False).network_address)
        return str(parsed)
    return "0.0.0.0"


def _lock_end(limit: int, failing_now: bool, **match) -> datetime | None:
    """When the lock that one username's or one address's failures set ends, or None
    when none is on: a lock starts at the failure that makes `limit` of them within one
    cool-off, and lasts one. `failing_now` counts the failure being recorded, which axes
    logs only after it has asked whether it locks."""
    now = timezone.now()
    times = list(
        AccessFailureLog.objects.filter(attempt_time__gt=now - 2 * COOL_OFF, **match)
        .order_by("attempt_time")
        .values_list("attempt_time", flat=True)
    )
    if failing_now:
        times.append(now)
    ends = [
        times[last] + COOL_OFF
        for last in range(limit - 1, len(times))
        if times[last] - times[last - limit + 1] <= COOL_OFF
    ]
    return max(ends) if ends and max(ends) > now else None


def _lock_ends(
    *, username: str | None, address: str, failing_now: bool = False
) -> dict[str, datetime]:
    """The locks on now, by what they lock (`username`, `address`), with their ends."""
    ends = {
        "username": None if username is None
        else _lock_end(USERNAME_LIMIT, failing_now, username=username),
        "address": _lock_end(ADDRESS_LIMIT, failing_now, ip_address=address),
    }
    return {by: end for by, end in ends.items() if end is not None}


def lock_ends_at(*, username: str | None, address: str) -> datetime | None:
    """When the lock on this username or address ends; None when neither is locked."""
    ends = _lock_ends(username=username, address=address)
    return max(ends.values()) if ends else None


class SettleAxesHandler(AxesDatabaseHandler):
    """Axes' database handler with the contract's two limits and Settle's audit events."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The limit when a lock is on (axes compares this with AXES_FAILURE_LIMIT), else 0."""
        locked = _lock_ends(
            username=get_client_username(request, credentials),
            address=request.axes_ip_address,
            failing_now=getattr(request, "settle_failing_now", False),
        )
        return USERNAME_LIMIT if locked else 0

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        from moderation import services

        if request is None:
            return
        AxesProxyHandler.update_request(request)
        refused = bool(request.axes_locked_out)
        request.settle_failing_now = not refused
        try:
            super().user_login_failed(sender, credentials, request, **kwargs)
        finally:
            request.settle_failing_now = False
        username = get_client_username(request, credentials)
        address = request.axes_ip_address
        services.login_failure_record(
            username=username or "",
            address=address,
            path=request.path,
            refused=refused,
            stage=(credentials or {}).get("stage", "password"),
        )
        if request.axes_locked_out and not refused:
            services.login_lock_record(
                username=username or "",
                address=address,
                by=list(_lock_ends(username=username, address=address)),
                ends_at=lock_ends_at(username=username, address=address),
            )


def login_failure_report(request: HttpRequest, *, username: str, stage: str) -> None:
    """Count a failure that was not a password check (a wrong second-factor code)."""
    user_login_failed.send(
        sender=__name__, credentials={"username": username, "stage": stage}, request=request
    )


def login_is_locked(request: HttpRequest, *, username: str) -> bool:
    return not AxesProxyHandler.is_allowed(request, {"username": username})


def lockout_response(
    request: HttpRequest, original_response=None, credentials=None
) -> HttpResponse:
    """The page a locked login answers: 429, when the lock ends, and Retry-After."""
    AxesProxyHandler.update_request(request)
    username = get_client_username(request, credentials)
    ends_at = lock_ends_at(username=username, address=request.axes_ip_address)
    if ends_at is None:  # raced with the lock's end or an unlock: say the whole cool-off
        ends_at = timezone.now() + COOL_OFF
    retry_after = max(1, math.ceil((ends_at - timezone.now()).total_seconds()))
    response = render(
        request,
        "moderation/login_locked.html",
        {"ends_at": ends_at, "retry_after": retry_after, "login_url": settings.LOGIN_URL},
        status=429,
    )
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response
