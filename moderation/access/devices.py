"""Device cookies (SPEC 7.1; OWASP's "Slow Down Online Guessing Attacks with Device
Cookies"): a username's lock must not let a stranger shut its owner out.

- A browser in which a username has completed a login (its password, and its second
  factor's code when it has one) receives a cookie naming that username and a random
  device id, signed with Django's signing (SECRET_KEY, a salt of its own). One cookie per
  username (its name carries a digest of the username), so two operators sharing a
  browser do not take each other's. Long-lived, HttpOnly, SameSite=Lax, Secure when the
  site is https; each completed login issues a fresh one.
- An attempt carrying a valid cookie for the username it tries is counted against that
  device alone (moderation.access.throttling counts it under the device's own key): 5
  failures, then that device waits 15 minutes. It is never refused by the lock that
  failures from elsewhere put on the username, nor by the address's: only someone who
  once knew the password (and the code) holds one.
- A cookie forged, tampered, expired, or signed for another username is no cookie: the
  attempt is counted as today, against the username and the address.
- The cookie is issued only after the second factor, or a password alone would buy a
  fresh device, and with it five more code guesses, as often as it is typed.
"""

import hashlib
import re
import secrets
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django_otp import user_has_device

COOKIE_PREFIX = "settle_device_"
COOKIE_AGE = timedelta(days=365)
SALT = "settle.login.device"
DEVICE_ID = re.compile(r"[0-9a-f]{32}")
# Set on the request by whatever completed a login; the middleware writes the cookie.
DUE = "settle_device_due"


def device_cookie_name(username: str) -> str:
    digest = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{COOKIE_PREFIX}{digest}"


def device_of(request: HttpRequest, *, username: str) -> str | None:
    """The device id of this request's valid cookie for `username`, or None."""
    value = getattr(request, "COOKIES", {}).get(device_cookie_name(username))
    if not value:
        return None
    try:
        payload = signing.loads(value, salt=SALT, max_age=COOKIE_AGE)
    except signing.BadSignature:  # forged, tampered or expired (SignatureExpired is one)
        return None
    if not isinstance(payload, dict) or payload.get("username") != username:
        return None
    device = payload.get("device")
    return device if isinstance(device, str) and DEVICE_ID.fullmatch(device) else None


def device_cookie_due(request: HttpRequest, *, username: str) -> None:
    """This request completed a login for `username`: its answer carries a device cookie."""
    setattr(request, DUE, username)


def device_cookie_due_on_login(sender, request, user, **kwargs) -> None:
    """`user_logged_in` receiver: a password alone completes the login of an account
    without a second factor; the code step completes the others (login.login_code)."""
    if request is not None and not user_has_device(user):
        device_cookie_due(request, username=user.get_username())


def device_cookie_set(request: HttpRequest, response: HttpResponse, *, username: str) -> None:
    value = signing.dumps(
        {"username": username, "device": secrets.token_hex(16)}, salt=SALT, compress=True
    )
    response.set_cookie(
        device_cookie_name(username),
        value,
        max_age=int(COOKIE_AGE.total_seconds()),
        httponly=True,
        secure=request.is_secure() or settings.SESSION_COOKIE_SECURE,
        samesite="Lax",
    )


class DeviceCookieMiddleware:
    """Writes the device cookie on the answer to a request that completed a login."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        username = getattr(request, DUE, None)
        if username is not None and response.status_code < 400:
            device_cookie_set(request, response, username=username)
        return response
