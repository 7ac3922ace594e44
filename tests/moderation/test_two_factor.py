"""The console's second factor (SPEC 7.1): enrolment at /console/2fa/, a code after the
password, one-time recovery codes, wrong codes under the login lock, reset_2fa and
SETTLE_CONSOLE_REQUIRE_2FA."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from moderation.models import AuditEvent
from tests.moderation.conftest import logged_in
from tests.moderation.two_factor_helpers import code_for, wrong_code

pytestmark = pytest.mark.django_db


def enrol(client: Client) -> tuple[str, list[str]]:
    """Enrol through the page; the secret and the recovery codes shown."""
    page = client.get("/console/2fa/")
    secret = page.context["secret"]
    confirmed = client.post("/console/2fa/", {"code": code_for(secret)})
    assert confirmed.status_code == 200
    return secret, confirmed.context["recovery_codes"]


def password_login(username="operator", password="operator-password") -> Client:
    client = Client()
    assert client.post(
        "/console/login/", {"username": username, "password": password}
    ).status_code == 302
    return client


def test_the_enrolment_page_shows_a_qr_code_and_the_secret_once(operator):
    client = logged_in(operator)

    first = client.get("/console/2fa/")
    second = client.get("/console/2fa/")

    assert first.status_code == 200 and "no-store" in first["Cache-Control"]
    page = first.content.decode()
    assert "<svg" in page and first.context["secret"] in page
    assert first.context["secret"] != second.context["secret"]  # a visit never re-shows one
    assert TOTPDevice.objects.filter(user=operator, confirmed=False).count() == 1


def test_the_console_links_to_the_enrolment_page(operator):
    page = logged_in(operator).get("/console/").content.decode()

    assert '<a href="/console/2fa/">Set up two-factor</a>' in page


def test_one_valid_code_confirms_and_shows_ten_recovery_codes_once(operator):
    client = logged_in(operator)

    _, recovery = enrol(client)

    assert len(recovery) == 10 and len(set(recovery)) == 10
    assert TOTPDevice.objects.get(user=operator).confirmed
    assert StaticToken.objects.filter(device__user=operator).count() == 10
    assert AuditEvent.objects.filter(action="two_factor_enrolled").count() == 1
    again = client.get("/console/2fa/").content.decode()
    assert "is set up" in again and recovery[0] not in again


def test_a_wrong_code_does_not_confirm(operator):
    client = logged_in(operator)
    secret = client.get("/console/2fa/").context["secret"]

    response = client.post("/console/2fa/", {"code": wrong_code(secret)})

    assert b"did not match" in response.content
    assert not TOTPDevice.objects.filter(user=operator, confirmed=True).exists()


def test_after_enrolment_a_login_asks_for_a_code_before_any_page(operator):
    secret, _ = enrol(logged_in(operator))
    client = password_login()

    for path in ("/console/", "/console/audit/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/console/login/code/?next=")

    verified = client.post("/console/login/code/?next=/admin/",
                           {"code": code_for(secret, steps_ahead=1), "next": "/admin/"})
    assert verified.status_code == 302 and verified["Location"] == "/admin/"
    assert client.get("/console/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_a_code_is_accepted_once(operator):
    secret, _ = enrol(logged_in(operator))
    code = code_for(secret, steps_ahead=1)
    first = password_login()
    assert first.post("/console/login/code/", {"code": code}).status_code == 302

    second = password_login()
    response = second.post("/console/login/code/", {"code": code})

    assert response.status_code == 200 and b"not valid" in response.content
    assert second.get("/console/").status_code == 302


def test_a_recovery_code_is_accepted_once(operator):
    _, recovery = enrol(logged_in(operator))
    first = password_login()
    assert first.post("/console/login/code/", {"code": recovery[3]}).status_code == 302

    second = password_login()

    assert second.post("/console/login/code/", {"code": recovery[3]}).status_code == 200
    assert StaticToken.objects.filter(device__user=operator).count() == 9


def test_wrong_codes_count_as_failed_logins_of_the_username(operator):
    secret, _ = enrol(logged_in(operator))
    client = password_login()
    statuses = [
        client.post("/console/login/code/", {"code": wrong_code(secret)}).status_code
        for _ in range(5)
    ]

    assert statuses == [200] * 4 + [429]
    # the session is out, and the right password is now refused too
    assert client.get("/console/").status_code == 302
    refused = Client().post("/console/login/",
                            {"username": "operator", "password": "operator-password"})
    assert refused.status_code == 429 and "Retry-After" in refused
    failed = AuditEvent.objects.filter(action="login_failed").order_by("id")
    stages = [e.details["stage"] for e in failed]
    assert stages[:5] == ["code"] * 5
    assert AuditEvent.objects.filter(action="login_locked").count() == 1


def test_reset_2fa_removes_the_second_factor_and_is_audited(operator):
    enrol(logged_in(operator))

    out = StringIO()
    call_command("reset_2fa", "operator", stdout=out)

    assert "Reset the second factor of operator" in out.getvalue()
    assert not TOTPDevice.objects.filter(user=operator).exists()
    assert password_login().get("/console/").status_code == 200
    [event] = AuditEvent.objects.filter(action="two_factor_reset")
    assert event.actor == "command-line" and event.details["username"] == "operator"


def test_reset_2fa_refuses_an_unknown_account(db):
    from django.core.management import CommandError

    with pytest.raises(CommandError):
        call_command("reset_2fa", "nobody", stdout=StringIO())


def test_required_two_factor_sends_an_unenrolled_account_to_enrolment(operator, settings):
    settings.SETTLE_CONSOLE_REQUIRE_2FA = True
    client = password_login()

    for path in ("/console/", "/console/tokens/", "/admin/", "/admin/auth/user/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"] == "/console/2fa/", path
    assert client.get("/console/2fa/").status_code == 200

    enrol(client)
    assert client.get("/console/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_without_the_requirement_an_unenrolled_account_works_as_before(operator):
    client = password_login()

    assert client.get("/console/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_a_typo_while_enrolling_keeps_the_secret_the_app_already_holds(operator):
    client = logged_in(operator)
    secret = client.get("/console/2fa/").context["secret"]

    typo = client.post("/console/2fa/", {"code": wrong_code(secret)})

    page = typo.content.decode()
    assert "did not match" in page and "The secret is unchanged" in page
    assert typo.context["secret"] == secret and secret in page
    assert TOTPDevice.objects.filter(user=operator, confirmed=False).count() == 1
    # the code the app shows for that same secret then confirms it
    confirmed = client.post("/console/2fa/", {"code": code_for(secret)})
    assert len(confirmed.context["recovery_codes"]) == 10


def test_the_navigation_says_whether_the_account_gives_a_second_factor(operator):
    client = logged_in(operator)
    before = client.get("/console/").content.decode()
    enrol(client)

    after = client.get("/console/").content.decode()

    assert '<a href="/console/2fa/">Set up two-factor</a>' in before
    assert '<a href="/console/2fa/">Set up two-factor</a>' in after
    assert 'id="two-factor-state"' in before and ">off</span>" in before
    assert 'id="two-factor-state"' in after and ">on</span>" in after


def test_the_code_step_shows_no_console_navigation(operator):
    enrol(logged_in(operator))
    client = password_login()

    page = client.get("/console/login/code/").content.decode()

    assert "Two-factor code" in page
    assert 'nav class="console"' not in page and "read only" not in page
    assert "Dashboard" not in page and "Log out" in page
