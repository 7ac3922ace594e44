"""How long a console session lasts (SPEC 7.1): the console's and the admin's, one session.

A session ends after SETTLE_CONSOLE_SESSION_IDLE without a request and 24 hours after its
login, whichever comes first. The login time and the last request's time live in the
session; every request of a logged-in session checks both, and otherwise moves the
session's own expiry (the database row's and the cookie's) to the nearer of the two ends,
so Django refuses an ended session by itself too. `login()` already issues a new session
id; logout is Django's LogoutView, which takes only POST.
"""

import time

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse

LOGIN_AT = "settle_login_at"
SEEN_AT = "settle_seen_at"


def session_stamp_login(sender, request, user, **kwargs) -> None:
    """`user_logged_in` receiver: the 24-hour cap counts from here."""
    if request is None or not hasattr(request, "session"):
        return
    now = time.time()
    # A new login asks afresh whether the account has a second factor (two_factor.py).
    request.session.pop("settle_2fa_expected", None)
    request.session[LOGIN_AT] = now
    request.session[SEEN_AT] = now
    request.session.set_expiry(_remaining(now, login_at=now, seen_at=now))


def _remaining(now: float, *, login_at: float, seen_at: float) -> int:
    idle_end = seen_at + settings.SETTLE_CONSOLE_SESSION_IDLE.total_seconds()
    cap_end = login_at + settings.SETTLE_CONSOLE_SESSION_MAX_AGE.total_seconds()
    return int(min(idle_end, cap_end) - now)


class ConsoleSessionMiddleware:
    """After AuthenticationMiddleware: ends a session past either limit, else renews it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Agents call without a session cookie: nothing is read for them.
        if settings.SESSION_COOKIE_NAME in request.COOKIES and request.user.is_authenticated:
            now = time.time()
            login_at = request.session.get(LOGIN_AT)
            seen_at = request.session.get(SEEN_AT, login_at)
            if login_at is None or _remaining(now, login_at=login_at, seen_at=seen_at) <= 0:
                logout(request)  # a session without a login time predates the rule: ended
            else:
                # Every request: a session written once a minute ended up to a minute
                # before its idle limit. A console page costs one session write (and two
                # requests of one session at once each save what they read, as Django's
                # sessions always do).
                request.session[SEEN_AT] = now
                request.session.set_expiry(_remaining(now, login_at=login_at, seen_at=now))
        return self.get_response(request)
