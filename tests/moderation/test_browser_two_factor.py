"""The second factor in headless Chromium (SPEC 7.1): enrol, log out, log in with a code,
a wrong code refused, a recovery code accepted once; and SETTLE_CONSOLE_REQUIRE_2FA."""

import pytest

from moderation.models import AuditEvent
from tests.moderation.two_factor_helpers import code_for, wrong_code

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def password(page, username="operator", secret_word="operator-password") -> None:
    page.goto("/console/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(secret_word)
    page.get_by_role("button", name="Log in").click()


def give_code(page, code: str) -> None:
    page.get_by_role("heading", name="Two-factor code").wait_for()
    page.get_by_label("Code").fill(code)
    page.get_by_role("button", name="Verify").click()


def log_out(page) -> None:
    page.get_by_role("button", name="Log out").click()
    page.get_by_role("heading", name="Operator login").wait_for()


def test_enrol_then_log_in_with_a_code_and_a_recovery_code_once(browser_page, operator):
    page = browser_page
    password(page)
    page.get_by_role("heading", name="Dashboard").wait_for()

    # enrol: a QR code drawn on the server, the secret as text, one code confirms
    page.get_by_role("link", name="Set up two-factor").click()
    assert page.locator(".qr-code svg").count() == 1
    secret = page.locator("#secret").inner_text().strip()
    page.get_by_label("Code from the app").fill(code_for(secret))
    page.get_by_role("button", name="Confirm").click()
    recovery = page.locator(".recovery-codes li").all_inner_texts()
    assert len(recovery) == 10
    log_out(page)

    # a wrong code is refused, a fresh one lets in
    password(page)
    give_code(page, wrong_code(secret))
    page.get_by_text("That code is not valid").wait_for()
    page.goto("/console/")
    assert "/console/login/code/" in page.url
    give_code(page, code_for(secret, steps_ahead=1))
    page.get_by_role("heading", name="Dashboard").wait_for()
    log_out(page)

    # a recovery code works once
    password(page)
    give_code(page, recovery[0])
    page.get_by_role("heading", name="Dashboard").wait_for()
    log_out(page)
    password(page)
    give_code(page, recovery[0])
    page.get_by_text("That code is not valid").wait_for()

    failed = AuditEvent.objects.filter(action="login_failed")
    assert [e.details["stage"] for e in failed] == ["code", "code"]


def test_when_required_an_unenrolled_account_reaches_only_enrolment(
    browser_page, operator, settings
):
    settings.SETTLE_CONSOLE_REQUIRE_2FA = True
    page = browser_page
    password(page)
    page.get_by_role("heading", name="Two-factor authentication").wait_for()

    for path in ("/console/", "/console/entries/", "/admin/", "/admin/auth/user/"):
        page.goto(path)
        assert page.url.endswith("/console/2fa/"), path

    secret = page.locator("#secret").inner_text().strip()
    page.get_by_label("Code from the app").fill(code_for(secret))
    page.get_by_role("button", name="Confirm").click()
    page.locator(".recovery-codes li").first.wait_for()
    page.goto("/admin/")
    assert page.url.endswith("/admin/")
    page.goto("/console/")
    page.get_by_role("heading", name="Dashboard").wait_for()
