"""The login's pages (SPEC 7.1): the password step, the second factor's code step after it,
enrolment at /console/2fa/, and logout. They translate; moderation.access.two_factor and
moderation.access.throttling hold the rules."""

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login
from django_otp import user_has_device

from moderation.access import devices, throttling, two_factor
from moderation.access import services as logins
from moderation.access.capabilities import access_for


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


@never_cache
@require_http_methods(["GET", "POST"])
def enrol(request: HttpRequest) -> HttpResponse:
    access = access_for(request.user)
    if not access.read:
        return redirect(f"{settings.LOGIN_URL}?next={two_factor.ENROL_PATH}")
    user = request.user
    context = {"access": access, "enrolled": user_has_device(user), "error": ""}
    if context["enrolled"]:
        return _no_store(render(request, "moderation/two_factor.html", context))
    device = None
    if request.method == "POST":
        device = two_factor.device_unconfirmed(user=user)
        codes = None
        if device is not None:
            codes = logins.two_factor_confirm(
                actor=user.get_username(), device=device, code=request.POST.get("code", "")
            )
        if codes is not None:
            otp_login(request, device)
            request.session.cycle_key()
            context.update(enrolled=True, recovery_codes=codes)
            return _no_store(render(request, "moderation/two_factor.html", context))
        # A typo keeps the secret the app already holds: a new one would mean adding the
        # account to the app again.
        context["error"] = (
            "That code did not match. The secret is unchanged: type the code the app "
            "shows now." if device is not None
            else "That code did not match. Scan this secret and try again."
        )
    device = device or two_factor.device_unconfirmed_new(user=user)
    context.update(
        qr_code=two_factor.qr_code_svg(device), secret=two_factor.secret_base32(device)
    )
    return _no_store(render(request, "moderation/two_factor.html", context))


@never_cache
@require_http_methods(["GET", "POST"])
def login_code(request: HttpRequest) -> HttpResponse:
    user = request.user
    target = request.POST.get("next") or request.GET.get("next") or "/console/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/console/"
    if not user.is_authenticated:
        return redirect(settings.LOGIN_URL)
    if user.is_verified() or not user_has_device(user):
        two_factor.device_expected_forget(request)  # reset since: ask again
        return redirect(target)
    context = {"next": target, "error": ""}
    if request.method == "POST":
        username = user.get_username()
        # Reserved before the code is checked, as a password is (moderation/access/throttling.py).
        # Counted against this browser alone when it holds the username's device cookie.
        key = throttling.login_key(request, username)
        if throttling.login_attempt_reserve(request, username=key) is None:
            throttling.login_failure_report(
                request, username=username, stage="code", refused=True
            )
            logout(request)
            return throttling.lockout_response(request, credentials={"username": username})
        try:
            device = two_factor.code_match(user=user, code=request.POST.get("code", ""))
        except BaseException:
            throttling.login_attempt_release(request)
            raise
        if device is not None:
            throttling.login_attempt_release(request)
            otp_login(request, device)
            request.session.cycle_key()
            devices.device_cookie_due(request, username=username)
            return redirect(target)
        throttling.login_failure_report(request, username=username, stage="code")
        if getattr(request, "axes_locked_out", False):
            logout(request)  # AxesMiddleware answers with the lock page
        context["error"] = "That code is not valid (a code works once)."
    return render(request, "moderation/login_code.html", context)


class LoginView(auth_views.LoginView):
    # The admin's form refuses accounts that are not staff, with a clear message.
    authentication_form = AdminAuthenticationForm
    template_name = "moderation/login.html"
    redirect_authenticated_user = True
    next_page = reverse_lazy("console:dashboard")


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("console:login")
