"""A stranger cannot lock the operator out (SPEC 7.1, OWASP's device cookies): a browser in
which a username has logged in holds a signed device cookie, and its attempts are counted
against that device alone, never refused by the lock that failures from elsewhere put on
the username. A cookie forged, tampered or signed for another username is no cookie."""

from base64 import b32encode
from io import StringIO

import pytest
import requests
from django.core import signing
from django.core.management import call_command
from django.test import Client

from moderation.access import devices
from moderation.models import AuditEvent
from tests.moderation import hashers
from tests.moderation.test_login_limits_hold import at_once, counted_checks  # noqa: F401
from tests.moderation.two_factor_helpers import code_for, wrong_code

CONSOLE = "/console/login/"
ADMIN = "/admin/login/"
COOKIE = devices.device_cookie_name("operator")


def attempt(client: Client, password: str = "wrong-password", *, door: str = CONSOLE,
            username: str = "operator"):
    return client.post(door, {"username": username, "password": password})


def fail(times: int, client: Client, **kwargs) -> list[int]:
    return [attempt(client, **kwargs).status_code for _ in range(times)]


def device_cookie(door: str = CONSOLE, username: str = "operator",
                  password: str = "operator-password") -> str:
    """Log in once in a fresh browser; the device cookie it was given."""
    browser = Client()
    response = attempt(browser, password, door=door, username=username)
    assert response.status_code == 302
    return response.cookies[devices.device_cookie_name(username)].value


def browser_with(value: str, name: str = COOKIE) -> Client:
    browser = Client()
    browser.cookies[name] = value
    return browser


def actions(name: str) -> list[dict]:
    return [e.details for e in AuditEvent.objects.filter(action=name).order_by("id")]


@pytest.mark.django_db
@pytest.mark.parametrize("door", [CONSOLE, ADMIN])
def test_it_gives_a_browser_that_logs_in_a_signed_long_lived_httponly_device_cookie(
    operator, door
):
    response = attempt(Client(), "operator-password", door=door)

    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) >= 300 * 24 * 3600
    assert not cookie["secure"]  # plain http here; https sets it (below)
    payload = signing.loads(cookie.value, salt=devices.SALT)
    assert payload["username"] == "operator" and len(payload["device"]) == 32
    # a failed login gives none
    assert COOKIE not in attempt(Client(), door=door).cookies


@pytest.mark.django_db
def test_over_https_the_device_cookie_is_secure(operator):
    response = Client().post(
        CONSOLE, {"username": "operator", "password": "operator-password"}, secure=True
    )

    assert response.cookies[COOKIE]["secure"]


@pytest.mark.django_db
@pytest.mark.parametrize("door", [CONSOLE, ADMIN])
def test_the_owner_with_its_device_cookie_logs_in_during_a_strangers_lock(operator, door):
    owner = browser_with(device_cookie())
    stranger = Client()

    statuses = fail(6, stranger, door=door)

    assert statuses[4:] == [429, 429]
    # the right password without the cookie still meets the username's lock
    assert attempt(Client(), "operator-password", door=door).status_code == 429
    response = attempt(owner, "operator-password", door=door)
    assert response.status_code == 302
    assert owner.session["_auth_user_id"] == str(operator.pk)
    [locked] = actions("login_locked")
    assert locked["locked_by"] == "username" and "device" not in locked


@pytest.mark.django_db
def test_the_owners_device_is_not_refused_by_a_locked_address(operator, django_user_model):
    owner = browser_with(device_cookie())
    # 20 failures over several usernames from this one address lock the address
    for n in range(20):
        attempt(Client(), username=f"guess-{n % 5}")
    assert attempt(Client(), "operator-password").status_code == 429

    assert attempt(owner, "operator-password").status_code == 302


@pytest.mark.django_db
def test_a_device_that_fails_five_times_is_locked_itself_but_not_another_device(operator):
    mine, other = browser_with(device_cookie()), browser_with(device_cookie())

    statuses = fail(5, mine)

    assert statuses[:4] == [200] * 4 and statuses[4] == 429
    refused = attempt(mine, "operator-password")
    assert refused.status_code == 429
    assert 14 * 60 < int(refused["Retry-After"]) <= 15 * 60
    assert b"from this browser" in refused.content
    # the other device, and a client without a cookie, are not locked by it
    assert attempt(other, "operator-password").status_code == 302
    assert attempt(Client(), "operator-password").status_code == 302
    [locked] = actions("login_locked")
    assert locked["locked_by"] == "device" and locked["username"] == "operator"
    failed = actions("login_failed")
    assert {f["device"] for f in failed} == {locked["device"]} and len(locked["device"]) == 8
    assert failed[-1]["refused"] == "locked"


@pytest.mark.django_db
def test_a_devices_failures_do_not_count_towards_the_username_lock(operator):
    mine = browser_with(device_cookie())

    fail(4, mine)
    fail(4, Client())

    # four and four: neither the device nor the username has reached five
    assert attempt(mine, "operator-password").status_code == 302
    assert attempt(Client(), "operator-password").status_code == 302
    assert actions("login_locked") == []


def forged_cookies(django_user_model) -> dict[str, str]:
    real = device_cookie()
    django_user_model.objects.create_superuser("other", "", "other-password")
    payload = {"username": "operator", "device": "0" * 32}
    return {
        "garbage": "not-a-cookie",
        "tampered": real[:-1] + ("A" if real[-1] != "A" else "B"),
        "payload tampered": ":".join([
            signing.dumps(payload, salt=devices.SALT).split(":")[0], *real.split(":")[1:]
        ]),
        "another username's": device_cookie(username="other", password="other-password"),
        "another key's": signing.dumps(payload, salt=devices.SALT, key="not-the-secret-key"),
        "another salt's": signing.dumps(payload, salt="another.salt"),
        "unsigned": signing.b64_encode(b'{"username":"operator","device":"' + b"0" * 32
                                       + b'"}').decode(),
        "empty": "",
    }


@pytest.mark.django_db
def test_a_forged_cookie_does_not_bypass_the_username_lock(operator, django_user_model):
    forged = forged_cookies(django_user_model)
    fail(5, Client())

    answers = {
        name: attempt(browser_with(value), "operator-password").status_code
        for name, value in forged.items()
    }

    assert answers == dict.fromkeys(forged, 429)
    assert all("device" not in f for f in actions("login_failed"))


@pytest.mark.django_db
def test_a_cookie_of_another_username_under_this_usernames_name_is_no_cookie(
    operator, django_user_model
):
    django_user_model.objects.create_superuser("other", "", "other-password")
    others = device_cookie(username="other", password="other-password")
    fail(5, Client())

    response = attempt(browser_with(others, name=COOKIE), "operator-password")

    assert response.status_code == 429


@pytest.mark.django_db
def test_a_typed_username_cannot_pass_for_a_devices_key(operator):
    from moderation.access import throttling

    posing = [f"operator{throttling.DEVICE_MARK}{n:032x}" for n in range(20)]
    for username in posing:
        attempt(Client(), username=username)

    # counted against the address as any unknown username: the address is locked
    assert attempt(Client(), "operator-password").status_code == 429
    assert not any(throttling.is_device_key(throttling.username_key(u)) for u in posing)


@pytest.mark.django_db
def test_unlock_login_lifts_the_locks_of_the_usernames_devices(operator):
    mine = browser_with(device_cookie())
    fail(5, mine)
    fail(5, Client())
    assert attempt(mine, "operator-password").status_code == 429

    call_command("unlock_login", "operator", stdout=StringIO())

    assert attempt(mine, "operator-password").status_code == 302
    assert attempt(Client(), "operator-password").status_code == 302
    [unlocked] = actions("login_unlocked")
    assert unlocked["username"] == "operator" and unlocked["records_removed"] == 10


@pytest.mark.django_db
def test_unlocking_another_username_leaves_a_devices_lock(operator, django_user_model):
    django_user_model.objects.create_superuser("Operator", "", "other-password")
    mine = browser_with(device_cookie())
    fail(5, mine)

    call_command("unlock_login", "Operator", stdout=StringIO())

    assert attempt(mine, "operator-password").status_code == 429


# --- With a second factor ---------------------------------------------------------------


def two_factor_device_cookie(secret: str) -> str:
    """A full login, password then code: the device cookie, which the password alone
    did not give."""
    browser = Client()
    assert attempt(browser, "operator-password").status_code == 302
    assert COOKIE not in browser.cookies
    answer = browser.post("/console/login/code/", {"code": code_for(secret)})
    assert answer.status_code == 302
    return answer.cookies[COOKIE].value


@pytest.mark.django_db
def test_with_a_second_factor_the_cookie_comes_after_the_code_and_codes_count_per_device(
    operator,
):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    device = TOTPDevice.objects.create(user=operator, name="app", confirmed=True)
    secret = b32encode(device.bin_key).decode()
    value = two_factor_device_cookie(secret)
    mine = browser_with(value)
    # a stranger who knows the password fails codes: the username locks
    stranger = Client()
    attempt(stranger, "operator-password")
    codes = [stranger.post("/console/login/code/", {"code": wrong_code(secret)}).status_code
             for _ in range(5)]
    assert codes[-1] == 429
    assert attempt(Client(), "operator-password").status_code == 429

    # the owner's browser passes its password and its code
    assert attempt(mine, "operator-password").status_code == 302
    answer = mine.post("/console/login/code/", {"code": code_for(secret, steps_ahead=1)})
    assert answer.status_code == 302 and mine.get("/console/").status_code == 200
    # its own wrong codes count against it alone: five lock this browser
    again = browser_with(value)
    attempt(again, "operator-password")
    mine_codes = [again.post("/console/login/code/", {"code": wrong_code(secret)}).status_code
                  for _ in range(5)]
    assert mine_codes == [200] * 4 + [429]
    assert attempt(browser_with(value), "operator-password").status_code == 429
    locks = sorted(e["locked_by"] for e in actions("login_locked"))
    assert locks == ["device", "username"]
    device_failures = [f for f in actions("login_failed") if "device" in f and not f.get("refused")]
    assert {f["stage"] for f in device_failures} == {"code"} and len(device_failures) == 5


# --- Over real HTTP ------------------------------------------------------------------------


def live_device_cookie(base: str) -> dict[str, str]:
    with requests.Session() as browser:
        browser.get(base + CONSOLE, timeout=30)
        answer = browser.post(base + CONSOLE, data={
            "username": "operator", "password": "operator-password",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        }, headers={"Referer": base + CONSOLE}, allow_redirects=False, timeout=30)
        assert answer.status_code == 302
        return {COOKIE: browser.cookies[COOKIE]}


@pytest.mark.django_db(transaction=True)
def test_with_a_real_server_the_owner_logs_in_during_a_strangers_lock(live_server, operator):
    owner = live_device_cookie(live_server.url)

    stranger = at_once(live_server.url, [("operator", f"wrong-{n}") for n in range(6)])
    without = at_once(live_server.url, [("operator", "operator-password")])
    with_cookie = at_once(live_server.url, [("operator", "operator-password")], cookies=[owner])

    assert stranger.count(429) >= 1 and without == [429]
    assert with_cookie == [302]


@pytest.mark.django_db(transaction=True)
def test_simultaneous_attempts_make_at_most_5_checks_per_device_and_5_without_one(
    live_server, operator, counted_checks  # noqa: F811
):
    mine, other = live_device_cookie(live_server.url), live_device_cookie(live_server.url)
    hashers.calls_reset()  # the two logins above were checks too
    cookies = [mine] * 10 + [other] * 10 + [{}] * 10

    statuses = at_once(
        live_server.url, [("operator", f"wrong-{n}") for n in range(30)], cookies=cookies
    )

    assert counted_checks()["verify"] <= 15 and 500 not in statuses
    counted = [e for e in actions("login_failed") if not e.get("refused")]
    by_device: dict[str, int] = {}
    for failure in counted:
        by_device[failure.get("device", "")] = by_device.get(failure.get("device", ""), 0) + 1
    assert len(by_device) == 3 and all(1 <= n <= 5 for n in by_device.values())
    assert len(actions("login_failed")) == 30
    locked = sorted(e["locked_by"] for e in actions("login_locked"))
    assert locked == ["device", "device", "username"]
