"""Failed logins are throttled (SPEC 7.1), by django-axes configured to Settle's addressing.

- Every door that checks a password (`/console/login/`, `/admin/login/`) goes through
  `django.contrib.auth.authenticate`, whose one backend is `SettleAxesBackend` (axes'
  backend with Django's model backend): a locked username or address is refused there,
  before any password is checked. A wrong second-factor code is reported the same way
  (`login_failure_report`), so it counts against the same username.
- The address is SPEC 4's (`board.posting.callers.client_address`): `X-Forwarded-For` is believed
  only from a peer in SETTLE_TRUSTED_PROXIES, so a forged header changes nothing and two
  operators behind one trusted proxy are counted apart. IPv6 is grouped by its /64, as
  the API's rate limit does.
- The username is counted as given when it could be one (no longer than the user model's
  username), and otherwise under a bounded key (`username_key`: a prefix and a digest)
  that names no possible account: the same key for locking, audit and unlock, and it
  fits axes' columns. Such a username is refused before any password is hashed (it can
  never log in, and it says nothing about which accounts exist), but counted.
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
- The limits hold for attempts that arrive at once, on any number of workers and hosts:
  an attempt reserves its check before the password is read (`LoginReservation`, taken
  under a lock on the username and on the address: PostgreSQL advisory locks; SQLite's
  transactions are all BEGIN IMMEDIATE, one writer at a time), and a check in progress
  counts as a failure. So no more than 5 checks for a username (20 for an address) are
  ever under way or failed within a window, and the failure that starts a lock is
  recorded under the same locks, so exactly one `login_locked` is written for it.
- A browser holding the username's device cookie (moderation.access.devices) is
  counted under a key of its own, the username, `DEVICE_MARK` and its device id: 5
  failures lock that device alone, and neither the username's lock nor the address's
  refuses it. Its failures and checks count towards neither (the address counts exclude
  device keys), so a stranger's failures never reach it and its own never lock others
  out. The bound on checks under way holds per key: 5 for the username from clients
  without its cookie, plus 5 for each device. Unlocking a username lifts its devices' locks.
- Failures, locks and unlocks are audit events (`login_failed`, `login_locked`,
  `login_unlocked`) with the username tried and the address, never the password.
"""

import hashlib
import ipaddress
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from axes.backends import AxesBackend
from axes.exceptions import AxesBackendPermissionDenied, AxesBackendRequestParameterRequired
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_lockout_message
from axes.models import AccessAttempt, AccessFailureLog
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from board.posting.callers import client_address
from moderation.access import devices
from moderation.access import services as logins
from moderation.actions import audit_record
from moderation.models import LoginReservation
from receipts import engine

USERNAME_LIMIT = 5
ADDRESS_LIMIT = 20
COOL_OFF = timedelta(minutes=15)
# A reservation outlives any check (gunicorn ends a request at 30 s); one left by a
# worker that died mid-check stops counting after this.
RESERVATION_TTL = timedelta(minutes=2)
# PostgreSQL advisory locks are two int4s: this class names Settle's login locks.
LOCK_CLASS = 0x5E771E
# The bounded key of an over-long username: a readable prefix, then a digest after a
# character no username may hold (Django's username validator allows \w.@+- only).
KEY_PREFIX = 64
KEY_MARK = "\u2026"
# A device's key: the username, this, then the device id. No username key holds it: a
# username holding KEY_MARK is keyed by its digest, whose prefix drops the mark.
DEVICE_MARK = KEY_MARK + "device:"
_DIGEST_KEY = re.compile(rf"[^{KEY_MARK}]{{0,{KEY_PREFIX}}}{KEY_MARK}[0-9a-f]{{32}}")


def username_max_length() -> int:
    user_model = get_user_model()
    return user_model._meta.get_field(user_model.USERNAME_FIELD).max_length or 150


def username_key(username: str) -> str:
    """What a username is counted, audited and unlocked under: itself when it could be a
    username, else a prefix and a digest of it (bounded, and no possible username). A
    key given again is itself; a name holding the mark is digested, so no name typed
    can pass for a device's key."""
    if len(username) <= username_max_length() and (
        KEY_MARK not in username or _DIGEST_KEY.fullmatch(username)
    ):
        return username
    digest = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{username[:KEY_PREFIX].replace(KEY_MARK, '')}{KEY_MARK}{digest}"


def login_key(request: HttpRequest, username: str) -> str:
    """What an attempt for `username` is counted under: its device's key when the
    request carries the username's valid device cookie, else the username's key."""
    key = username_key(username)
    device = devices.device_of(request, username=username) if key == username else None
    return key if device is None else f"{key}{DEVICE_MARK}{device}"


def is_device_key(key: str | None) -> bool:
    return key is not None and DEVICE_MARK in key


def key_parts(key: str) -> tuple[str, str | None]:
    """The username a key counts for, and the device's id when it is a device's key."""
    username, _, device = key.partition(DEVICE_MARK)
    return username, (device or None)


def login_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """AXES_USERNAME_CALLABLE: the attempt's key (`login_key`) wherever axes asks."""
    if credentials is not None:
        username = credentials.get("username")
    else:
        username = getattr(request, "POST", {}).get("username")
    return None if username is None else login_key(request, str(username))


def login_address(request: HttpRequest) -> str:
    """The address a login failure counts against: SPEC 4's client address, IPv6 by /64.

    A forwarded hop that is not an address (a trusted proxy wrote `unknown`) counts
    against the proxy itself: axes stores an IP address, and nothing better is known.
    """
    remote = request.META.get("REMOTE_ADDR", "") or "0.0.0.0"
    for candidate in (client_address(request), remote):
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


# An address counts the attempts of clients without a device cookie only.
NOT_DEVICES = ~Q(username__contains=DEVICE_MARK)


def _lock_end(limit: int, failing_now: bool, *match: Q) -> datetime | None:
    """When the lock that one username's or one address's failures set ends, or None
    when none is on: a lock starts at the failure that makes `limit` of them within one
    cool-off, and lasts one. `failing_now` counts the failure being recorded, which axes
    logs only after it has asked whether it locks."""
    now = timezone.now()
    times = list(
        AccessFailureLog.objects.filter(*match, attempt_time__gt=now - 2 * COOL_OFF)
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
    """The locks on now, by what they lock (`username`, `address`, or a `device` for a
    device's key, which nothing else locks), with their ends."""
    if is_device_key(username):
        ends = {"device": _lock_end(USERNAME_LIMIT, failing_now, Q(username=username))}
    else:
        ends = {
            "username": None if username is None
            else _lock_end(USERNAME_LIMIT, failing_now, Q(username=username)),
            "address": _lock_end(ADDRESS_LIMIT, failing_now, Q(ip_address=address), NOT_DEVICES),
        }
    return {by: end for by, end in ends.items() if end is not None}


def lock_ends_at(*, username: str | None, address: str) -> datetime | None:
    """When the lock on this username or address ends; None when neither is locked."""
    ends = _lock_ends(username=username, address=address)
    return max(ends.values()) if ends else None


@contextmanager
def login_counts_locked(*, username: str | None, address: str | None) -> Iterator[None]:
    """A transaction that holds this username's and this address's lock to its end: whoever
    counts, records or forgets their failures and checks takes it. On PostgreSQL two
    advisory locks, always taken in one order so two holders never deadlock (two names
    that share a 32-bit hash only wait for each other); on SQLite every transaction is
    BEGIN IMMEDIATE, so it is the one writer."""
    names = [f"{kind}:{value}" for kind, value in
             (("address", address), ("username", username)) if value is not None]
    with transaction.atomic():
        engine.for_connection(_COUNTS_LOCK)(names)
        yield


def _advisory_locks(names: list[str]) -> None:
    keys = sorted(
        int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)
        for name in names
    )
    connection.advisory_xact_locks(LOCK_CLASS, keys)


def _one_writer_already(names: list[str]) -> None:
    pass  # BEGIN IMMEDIATE made this transaction the one writer


_COUNTS_LOCK = {"postgresql": _advisory_locks, "sqlite": _one_writer_already}


def _checks_full(limit: int, *, now: datetime, failures: Q, reservations: Q) -> bool:
    """Whether one more check would pass `limit`: the failures of the last cool-off and the
    checks under way (each may yet fail) have reached it."""
    recent = AccessFailureLog.objects.filter(failures, attempt_time__gt=now - COOL_OFF)
    under_way = LoginReservation.objects.filter(
        reservations, created_at__gt=now - RESERVATION_TTL
    )
    return recent.count() + under_way.count() >= limit


def login_attempt_reserve(request: HttpRequest, *, username: str | None) -> int | None:
    """Reserve one check of a password or code for this username or device (a key) from
    this request's address; the reservation's id, or None when a lock refuses the attempt.

    Counted first, checked after: the reservation is a failure to every other attempt
    until `login_attempt_release` or the failure's record replaces it. A device's key
    is counted alone, so only its own lock is taken."""
    AxesProxyHandler.update_request(request)
    address = request.axes_ip_address
    device = is_device_key(username)
    now = timezone.now()
    with login_counts_locked(username=username, address=None if device else address):
        # Only rows under the locks held: deleting others' could deadlock with their holders.
        stale = Q(username=username or "") if device else (
            Q(address=address) | Q(username=username or "")
        )
        LoginReservation.objects.filter(stale, created_at__lte=now - RESERVATION_TTL).delete()
        if _lock_ends(username=username, address=address):
            return None
        if username is not None and _checks_full(
            USERNAME_LIMIT, now=now, failures=Q(username=username),
            reservations=Q(username=username),
        ):
            return None
        if not device and _checks_full(
            ADDRESS_LIMIT, now=now, failures=Q(ip_address=address) & NOT_DEVICES,
            reservations=Q(address=address) & NOT_DEVICES,
        ):
            return None
        reservation = LoginReservation.objects.create(
            username=username or "", address=address, created_at=now
        )
    request.settle_login_reservation = reservation.pk
    return reservation.pk


def login_attempt_release(request: HttpRequest) -> None:
    """The check passed: its reservation counts no more."""
    reservation = getattr(request, "settle_login_reservation", None)
    if reservation is not None:
        LoginReservation.objects.filter(pk=reservation).delete()
        request.settle_login_reservation = None


def _refuse(request: HttpRequest, **kwargs) -> None:
    """Stop `authenticate` as axes does for a lock: Django then reports the failure,
    which the handler audits as refused, and AxesMiddleware answers the lock page."""
    kwargs.get("response_context", {})["error"] = get_lockout_message()
    request.axes_locked_out = True
    raise AxesBackendPermissionDenied("the username or the address is locked")


class SettleAxesBackend(AxesBackend):
    """Axes' backend and Django's model backend in one, so the check is reserved before
    the password is read and released when it passes (SPEC 7.1's limits under load)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            raise AxesBackendRequestParameterRequired("a login needs its request")
        key = None if username is None else login_key(request, str(username))
        if login_attempt_reserve(request, username=key) is None:
            _refuse(request, **kwargs)
        if username is not None and len(str(username)) > username_max_length():
            # Never an account: a counted failure without a password hash, which would
            # only cost time and tells nothing a client does not know (its length).
            raise PermissionDenied("no username is this long")
        try:
            user = ModelBackend.authenticate(self, request, username, password, **kwargs)
        except BaseException:
            login_attempt_release(request)
            raise
        if user is not None:
            login_attempt_release(request)
        return user


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

        if request is None:
            return
        AxesProxyHandler.update_request(request)
        refused = bool(request.axes_locked_out)
        username = get_client_username(request, credentials)
        address = request.axes_ip_address
        # Under the locks the reservation was taken with: the reservation becomes a
        # failure, and only the failure that turns a lock on records it.
        device_only = is_device_key(username)
        owner, device = key_parts(username or "")
        with login_counts_locked(username=username, address=None if device_only else address):
            before = {} if refused else _lock_ends(username=username, address=address)
            reservation = getattr(request, "settle_login_reservation", None)
            if reservation is not None:
                LoginReservation.objects.filter(pk=reservation).delete()
                request.settle_login_reservation = None
            request.settle_failing_now = not refused
            try:
                super().user_login_failed(sender, credentials, request, **kwargs)
            finally:
                request.settle_failing_now = False
            logins.login_failure_record(
                username=owner,
                device=device,
                address=address,
                path=request.path,
                refused=refused,
                stage=(credentials or {}).get("stage", "password"),
            )
            after = {} if refused else _lock_ends(username=username, address=address)
            if set(after) - set(before):
                logins.login_lock_record(
                    username=owner,
                    device=device,
                    address=address,
                    by=list(after),
                    ends_at=max(after.values()),
                )


def login_failure_report(
    request: HttpRequest, *, username: str, stage: str, refused: bool = False
) -> None:
    """Report a failed check that was not a password (a wrong second-factor code), whose
    reservation `login_attempt_reserve` took; or, `refused`, an attempt a lock refused
    unchecked (audited, not counted), as the password's door does."""
    if refused:
        request.axes_locked_out = True
    user_login_failed.send(
        sender=__name__, credentials={"username": username, "stage": stage}, request=request
    )


def lockout_response(
    request: HttpRequest, original_response=None, credentials=None
) -> HttpResponse:
    """The page a locked login answers: 429, when the lock ends, and Retry-After."""
    AxesProxyHandler.update_request(request)
    username = get_client_username(request, credentials)
    ends_at = lock_ends_at(username=username, address=request.axes_ip_address)
    if ends_at is None:
        # Refused for checks under way (which may yet fail and lock), or raced with the
        # lock's end or an unlock: say the whole cool-off.
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


def _device_rows(model, username: str) -> list[int]:
    """The rows of `model` under this username's devices' keys. SQLite's LIKE ignores
    case, so the prefix is compared again here: `Root`'s devices are not `root`'s."""
    prefix = f"{username}{DEVICE_MARK}"
    rows = model.objects.filter(username__startswith=prefix).values_list("pk", "username")
    return [pk for pk, key in rows if key.startswith(prefix)]


def login_unlock(*, actor: str, username: str = "", address: str = "", reason: str = "") -> int:
    """Lift a lock before it ends: forget the username's (its devices' too) and the
    address's failures.

    A username is named as tried or by the key it was counted under (an over-long one's
    prefix and digest, as the audit shows it): both find the same failures."""
    username, address = username_key(username.strip()), address.strip()
    if not (username or address):
        raise ValueError("name a username or an address to unlock")
    with login_counts_locked(username=username or None, address=address or None):
        forgotten = 0
        # The failure log is what counts; axes' own rows and the checks under way go too.
        if username:
            # A device's rows are under its own key (and its own lock, which a device's
            # attempt takes alone: waiting here for it cannot close a circle).
            for model in (AccessFailureLog, AccessAttempt, LoginReservation):
                rows = model.objects.filter(
                    Q(username=username) | Q(pk__in=_device_rows(model, username))
                )
                removed = rows.delete()[1].get(model._meta.label, 0)
                if model is AccessFailureLog:
                    forgotten += removed
        if address:
            forgotten += AccessFailureLog.objects.filter(ip_address=address).delete()[0]
            AccessAttempt.objects.filter(ip_address=address).delete()
            LoginReservation.objects.filter(address=address).delete()
        details = {"username": username, "records_removed": forgotten}
        if address:
            details["address"] = address
        audit_record(
            actor=actor, action="login_unlocked", target_type="login", reason=reason,
            details=details,
        )
    return forgotten
