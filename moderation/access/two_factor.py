"""The console's second factor (SPEC 7.1): TOTP (RFC 6238, 30 s, 6 digits) by django-otp,
and ten one-time recovery codes (django-otp's static tokens).

- Enrolment (`/console/2fa/`): each visit of an account without a confirmed device makes
  a fresh unconfirmed TOTP device, whose secret is shown on that page only (QR code and
  base32); one valid code confirms it, and the answer shows the recovery codes once.
- After a password, an account with a confirmed device is logged in but not verified:
  `SecondFactorMiddleware` sends it to the code step before any console or admin page.
  A code is accepted once (django-otp keeps the last step used; a recovery code is
  deleted when used). A wrong code counts as a failed login of that username
  (moderation.access.throttling), so codes share the password's lock.
- With SETTLE_CONSOLE_REQUIRE_2FA, a staff account without a confirmed device reaches only
  the enrolment page.
django-otp's own throttling is off: the login lock is the one rule, with one 429 page.
"""

from base64 import b32encode
from urllib.parse import quote

import qrcode
import qrcode.image.svg
from django.conf import settings
from django.db import transaction
from django.shortcuts import redirect
from django_otp import user_has_device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

RECOVERY_CODES = 10
DEVICE_EXPECTED = "settle_2fa_expected"
CODE_PATH = "/console/login/code/"
ENROL_PATH = "/console/2fa/"
# Reachable before the second factor: the doors themselves and the way out.
OPEN_PATHS = {"/console/login/", CODE_PATH, ENROL_PATH, "/console/logout/", "/admin/logout/"}


def device_unconfirmed_new(*, user) -> TOTPDevice:
    """A fresh secret for enrolment; an earlier unconfirmed one is forgotten."""
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user, confirmed=False).delete()
        return TOTPDevice.objects.create(user=user, name="authenticator", confirmed=False)


def device_unconfirmed(*, user) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user=user, confirmed=False).order_by("-id").first()


def secret_base32(device: TOTPDevice) -> str:
    return b32encode(device.bin_key).decode()


def qr_code_svg(device: TOTPDevice) -> str:
    image = qrcode.make(device.config_url, image_factory=qrcode.image.svg.SvgPathImage)
    return image.to_string(encoding="unicode")


def device_confirm(*, device: TOTPDevice, code: str) -> list[str] | None:
    """Confirm enrolment with one valid code; the recovery codes, or None for a wrong code."""
    with transaction.atomic():
        device = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        if device.confirmed or not device.verify_token(_clean(code)):
            return None
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        StaticDevice.objects.filter(user=device.user).delete()
        recovery = StaticDevice.objects.create(user=device.user, name="recovery", confirmed=True)
        codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
        StaticToken.objects.bulk_create(StaticToken(device=recovery, token=c) for c in codes)
    return codes


def code_match(*, user, code: str):
    """The confirmed device that accepts this code (once), or None."""
    code = _clean(code)
    if not code:
        return None
    with transaction.atomic():
        for device in (
            *TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True),
            *StaticDevice.objects.select_for_update().filter(user=user, confirmed=True),
        ):
            if device.verify_token(code):
                return device
    return None


def devices_remove(*, user) -> int:
    with transaction.atomic():
        removed = TOTPDevice.objects.filter(user=user).delete()[0]
        removed += StaticDevice.objects.filter(user=user).delete()[0]
    return removed


def _clean(code: str) -> str:
    return "".join((code or "").split())[:32]


def device_expected(request) -> bool:
    """Whether this session's account has a confirmed device: asked once a session (at
    the first console page after its login) and kept, so a page costs no query for it."""
    expected = request.session.get(DEVICE_EXPECTED)
    if expected is None:
        expected = request.session[DEVICE_EXPECTED] = user_has_device(request.user)
    return expected


def device_expected_forget(request) -> None:
    request.session.pop(DEVICE_EXPECTED, None)


class SecondFactorMiddleware:
    """After OTPMiddleware: a session that has not passed its second factor reaches no
    console or admin page but the code step (or, when required, the enrolment page)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        path = request.path
        if (
            path.startswith(("/console/", "/admin/"))
            and path not in OPEN_PATHS
            and settings.SESSION_COOKIE_NAME in request.COOKIES
            and request.user.is_authenticated
            and not request.user.is_verified()
        ):
            if device_expected(request):
                return redirect(f"{CODE_PATH}?next={quote(request.get_full_path())}")
            if settings.SETTLE_CONSOLE_REQUIRE_2FA:
                return redirect(ENROL_PATH)
        return self.get_response(request)
