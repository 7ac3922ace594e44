"""Failed logins are throttled by username and by client address (SPEC 7.1), at both doors,
and every failure, lock and unlock is an audit event."""

from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from moderation.models import AuditEvent
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.django_db

CONSOLE = "/console/login/"
ADMIN = "/admin/login/"


def attempt(client: Client, username: str, password: str = "wrong-password", *,
            door: str = CONSOLE, **headers):
    return client.post(door, {"username": username, "password": password}, **headers)


def fail(times: int, username: str, *, client: Client | None = None, door: str = CONSOLE,
         **headers) -> list[int]:
    client = client or Client()
    return [attempt(client, username, door=door, **headers).status_code for _ in range(times)]


def logs_in(username: str, password: str, **headers) -> bool:
    response = attempt(Client(), username, password, **headers)
    return response.status_code == 302


def actions(name: str) -> list[dict]:
    return [e.details for e in AuditEvent.objects.filter(action=name).order_by("id")]


def test_it_locks_a_username_after_five_failures_and_refuses_the_right_password(operator):
    statuses = fail(5, "operator")

    response = attempt(Client(), "operator", "operator-password")

    assert statuses[:4] == [200] * 4 and statuses[4] == 429
    assert response.status_code == 429
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60
    assert b"Too many failed logins" in response.content
    assert b"The lock ends at" in response.content
    assert "_auth_user_id" not in response.client.session
    # the refused attempt was audited as refused, and the lock once
    failed = actions("login_failed")
    assert len(failed) == 6 and failed[-1]["refused"] == "locked"
    assert all(not e.get("refused") for e in failed[:5])
    [locked] = actions("login_locked")
    assert locked["username"] == "operator" and locked["address"] == "127.0.0.1"
    assert locked["locked_by"] == "username"


def test_a_locked_login_checks_no_password(operator):
    fail(5, "operator")
    operator.set_password("changed-while-locked")
    operator.save()

    # the right password would log in if it were checked: still 429
    assert attempt(Client(), "operator", "changed-while-locked").status_code == 429


def test_four_failures_leave_the_username_open(operator):
    fail(4, "operator")

    assert logs_in("operator", "operator-password")
    assert actions("login_locked") == []


def test_a_username_that_does_not_exist_is_locked_the_same_way(db):
    statuses = fail(6, "nobody-by-this-name")

    assert statuses[4:] == [429, 429]
    [locked] = actions("login_locked")
    assert locked["username"] == "nobody-by-this-name"


def test_admin_and_console_failures_count_together(operator):
    fail(3, "operator", door=ADMIN)
    fail(2, "operator", door=CONSOLE)

    assert attempt(Client(), "operator", "operator-password", door=ADMIN).status_code == 429
    assert attempt(Client(), "operator", "operator-password").status_code == 429
    paths = [e["path"] for e in actions("login_failed")]
    assert paths[:5] == [ADMIN] * 3 + [CONSOLE] * 2


def test_other_users_are_not_locked_with_one_username(operator, django_user_model):
    django_user_model.objects.create_superuser("second", "", "second-password")
    fail(5, "operator")

    assert logs_in("second", "second-password")


def test_the_lock_ends_by_itself_after_fifteen_minutes(operator):
    fail(5, "operator")

    with time_machine.travel(timezone.now() + timedelta(minutes=15, seconds=5)):
        assert logs_in("operator", "operator-password")


def test_refused_attempts_during_a_lock_do_not_prolong_it(operator):
    fail(5, "operator")
    with time_machine.travel(timezone.now() + timedelta(minutes=10)):
        fail(3, "operator")

    with time_machine.travel(timezone.now() + timedelta(minutes=15, seconds=5)):
        assert logs_in("operator", "operator-password")


def test_failures_spread_over_more_than_fifteen_minutes_do_not_lock(operator):
    # five failures eight minutes apart: never more than two within 15 minutes
    start = timezone.now()
    for n in range(5):
        with time_machine.travel(start + timedelta(minutes=8 * n), tick=False):
            assert fail(1, "operator") == [200]

    with time_machine.travel(start + timedelta(minutes=33), tick=False):
        assert logs_in("operator", "operator-password")
    assert actions("login_locked") == []


def test_five_failures_within_fifteen_minutes_lock_however_they_are_spread(operator):
    start = timezone.now()
    for minutes in (0, 20, 24, 28, 32, 34):  # the last five within 14 minutes
        with time_machine.travel(start + timedelta(minutes=minutes), tick=False):
            statuses = fail(1, "operator")

    assert statuses == [429]
    with time_machine.travel(start + timedelta(minutes=48), tick=False):
        assert attempt(Client(), "operator", "operator-password").status_code == 429
    with time_machine.travel(start + timedelta(minutes=49, seconds=5), tick=False):
        assert logs_in("operator", "operator-password")


def test_twenty_failures_from_one_address_lock_the_address(operator):
    # four tries each for five usernames: no username reaches its limit
    statuses = [s for n in range(5) for s in fail(4, f"guess-{n}")]

    assert statuses[:19] == [200] * 19 and statuses[19] == 429
    assert attempt(Client(), "operator", "operator-password").status_code == 429
    [locked] = actions("login_locked")
    assert locked["locked_by"] == "address" and locked["address"] == "127.0.0.1"
    # another address is not locked
    assert logs_in("operator", "operator-password", REMOTE_ADDR="192.0.2.7")


def test_a_forged_forwarded_for_from_an_untrusted_peer_changes_nothing(operator, settings):
    settings.SETTLE_TRUSTED_PROXIES = []
    for n in range(20):
        attempt(Client(), f"guess-{n}", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")

    response = attempt(Client(), "operator", "operator-password",
                       HTTP_X_FORWARDED_FOR="198.51.100.200")

    assert response.status_code == 429
    assert {e["address"] for e in actions("login_failed")} == {"127.0.0.1"}


def test_behind_a_trusted_proxy_two_forwarded_addresses_count_apart(operator, settings):
    import ipaddress

    settings.SETTLE_TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    for n in range(20):
        attempt(Client(), f"guess-{n}", HTTP_X_FORWARDED_FOR="203.0.113.5")

    refused = attempt(Client(), "operator", "operator-password",
                      HTTP_X_FORWARDED_FOR="203.0.113.5")
    allowed = attempt(Client(), "operator", "operator-password",
                      HTTP_X_FORWARDED_FOR="203.0.113.6")

    assert refused.status_code == 429
    assert allowed.status_code == 302
    assert {e["address"] for e in actions("login_failed")} == {"203.0.113.5"}


def test_ipv6_addresses_of_one_slash_64_count_as_one(operator):
    for n in range(20):
        attempt(Client(), f"guess-{n}", REMOTE_ADDR=f"2001:db8:1:2::{n + 1:x}")

    assert not logs_in("operator", "operator-password", REMOTE_ADDR="2001:db8:1:2::ffff")
    assert logs_in("operator", "operator-password", REMOTE_ADDR="2001:db8:1:3::1")


def test_the_audit_shows_the_username_and_address_never_the_password(operator):
    attempt(Client(), "operator", "a-secret-guess-123")

    [event] = AuditEvent.objects.filter(action="login_failed")
    assert event.details["username"] == "operator"
    assert event.details["address"] == "127.0.0.1"
    assert "a-secret-guess-123" not in str(event.details) + event.reason
    page = logged_in(operator).get("/console/audit/").content.decode()
    assert "login_failed" in page and "127.0.0.1" in page
    assert "a-secret-guess-123" not in page


def test_unlock_login_lifts_a_lock_and_is_audited(operator):
    fail(5, "operator")
    out = StringIO()

    call_command("unlock_login", "operator", stdout=out)

    assert "Unlocked operator" in out.getvalue()
    assert logs_in("operator", "operator-password")
    [unlocked] = AuditEvent.objects.filter(action="login_unlocked")
    assert unlocked.actor == "command-line" and unlocked.details["username"] == "operator"


def test_unlock_login_with_an_address_lifts_an_address_lock(operator):
    for n in range(20):
        attempt(Client(), f"guess-{n}")

    call_command("unlock_login", "guess-0", "--address", "127.0.0.1", stdout=StringIO())

    assert logs_in("operator", "operator-password")


def test_an_administrator_unlocks_from_the_audit_page(operator, administrator):
    fail(5, "operator")
    console = logged_in(administrator)
    page = console.get("/console/audit/").content.decode()
    assert 'action="/console/audit/unlock"' in page

    response = console.post("/console/audit/unlock", {"username": "operator"}, follow=True)

    assert b"Unlocked logins for operator." in response.content
    assert logs_in("operator", "operator-password")
    [unlocked] = AuditEvent.objects.filter(action="login_unlocked")
    assert unlocked.actor == "admin"


def test_a_moderator_may_not_unlock(operator, moderator):
    fail(5, "operator")
    console = logged_in(moderator)

    assert b"/console/audit/unlock" not in console.get("/console/audit/").content
    assert console.post("/console/audit/unlock", {"username": "operator"}).status_code == 403
    assert not logs_in("operator", "operator-password")
    assert not AuditEvent.objects.filter(action="login_unlocked").exists()


def real_server_login(api):
    """A login POST over real HTTP to the live server, with the page's CSRF token."""

    def post(username: str, password: str, **headers):
        api.get("/console/login/")
        token = next(c["value"] for c in api.storage_state()["cookies"]
                     if c["name"] == "csrftoken")
        return api.post("/console/login/", form={
            "username": username, "password": password, "csrfmiddlewaretoken": token,
        }, headers=headers, max_redirects=0)

    return post


@pytest.mark.django_db(transaction=True)
def test_with_a_real_server_five_failures_lock_and_unlock_lifts(live_server, operator, api):
    post = real_server_login(api)

    statuses = [post("operator", "wrong-password").status for _ in range(5)]
    refused = post("operator", "operator-password")

    assert statuses == [200] * 4 + [429]
    assert refused.status == 429 and int(refused.headers["retry-after"]) > 0
    call_command("unlock_login", "operator", stdout=StringIO())
    assert post("operator", "operator-password").status == 302
    assert [e.action for e in AuditEvent.objects.order_by("id")] == (
        ["login_failed"] * 5 + ["login_locked", "login_failed", "login_unlocked"]
    )


@pytest.mark.django_db(transaction=True)
def test_with_a_real_server_behind_a_trusted_proxy_addresses_count_apart(
    live_server, operator, api, settings
):
    import ipaddress

    settings.SETTLE_TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.0/8")]
    post = real_server_login(api)
    for n in range(20):
        post(f"guess-{n}", "wrong-password", **{"X-Forwarded-For": "203.0.113.5"})

    refused = post("operator", "operator-password", **{"X-Forwarded-For": "203.0.113.5"})
    allowed = post("operator", "operator-password", **{"X-Forwarded-For": "203.0.113.6"})

    assert refused.status == 429
    assert allowed.status == 302


@pytest.mark.django_db(transaction=True)
def test_with_a_real_server_a_forged_forwarded_for_is_ignored(live_server, operator, api, settings):
    settings.SETTLE_TRUSTED_PROXIES = []
    post = real_server_login(api)
    for n in range(20):
        post(f"guess-{n}", "wrong-password", **{"X-Forwarded-For": f"198.51.100.{n}"})

    refused = post("operator", "operator-password", **{"X-Forwarded-For": "198.51.100.99"})

    assert refused.status == 429
    assert {e.details["address"] for e in AuditEvent.objects.filter(action="login_failed")} == {
        "127.0.0.1"
    }
