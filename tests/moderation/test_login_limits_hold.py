"""SPEC 7.1's limits hold for any username and for attempts that arrive at once: a username
of any length is a counted failure (never a 500, never a password hash when it is longer
than any username can be), and 15 simultaneous wrong passwords for one username make at
most 5 password checks and one `login_locked`, each attempt on its own thread and
database connection against a live server."""

import re
import threading
import time
from base64 import b32encode
from io import StringIO

import pytest
import requests
from django.core.management import call_command
from django.test import Client

from moderation.access import throttling
from moderation.models import AuditEvent
from tests.moderation import hashers

CONSOLE = "/console/login/"
ADMIN = "/admin/login/"
LONG = "x" * 300


@pytest.fixture
def counted_checks(settings):
    settings.PASSWORD_HASHERS = ["tests.moderation.hashers.CountingHasher"]
    hashers.calls_reset()
    yield hashers.calls
    hashers.calls_reset()


def actions(name: str) -> list[dict]:
    return [e.details for e in AuditEvent.objects.filter(action=name).order_by("id")]


def post(client: Client, username: str, password: str = "wrong-password", door: str = CONSOLE):
    return client.post(door, {"username": username, "password": password})


# --- A username of any length --------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("door", [CONSOLE, ADMIN])
def test_a_username_longer_than_any_is_a_counted_failure_without_a_hash(door, counted_checks):
    response = post(Client(), "é" + LONG * 10, door=door)

    assert response.status_code == 200
    [failed] = actions("login_failed")
    assert failed["username"] == throttling.username_key("é" + LONG * 10)
    assert len(failed["username"]) <= 150 and failed["username"].startswith("é" + "x" * 20)
    assert counted_checks() == {"verify": 0, "encode": 0}


@pytest.mark.django_db
def test_25_long_usernames_from_one_address_reach_the_address_lock(operator, counted_checks):
    client = Client()
    statuses = [post(client, f"{n}-{LONG}").status_code for n in range(25)]

    assert statuses == [200] * 19 + [429] * 6
    assert post(Client(), "operator", "operator-password").status_code == 429
    [locked] = actions("login_locked")
    assert locked["locked_by"] == "address"
    assert len(actions("login_failed")) == 26
    assert counted_checks() == {"verify": 0, "encode": 0}


@pytest.mark.django_db
def test_one_long_username_locks_under_its_key_and_unlocking_it_by_name_lifts(db):
    statuses = [post(Client(), LONG, door=door).status_code
                for door in (CONSOLE, ADMIN, CONSOLE, ADMIN, CONSOLE, ADMIN)]

    assert statuses == [200] * 4 + [429] * 2
    [locked] = actions("login_locked")
    assert locked["username"] == throttling.username_key(LONG)
    call_command("unlock_login", LONG, stdout=StringIO())
    assert post(Client(), LONG).status_code == 200
    [unlocked] = actions("login_unlocked")
    assert unlocked["username"] == throttling.username_key(LONG)


@pytest.mark.django_db
def test_the_key_of_a_long_username_is_its_own_key_and_names_no_possible_user():
    key = throttling.username_key(LONG)

    assert throttling.username_key(key) == key
    assert throttling.username_key(LONG + "y") != key
    assert throttling.username_key("operator") == "operator"
    assert throttling.username_key("x" * 150) == "x" * 150
    assert not re.fullmatch(r"[\w.@+-]+", key)  # no character a username may hold


# --- Attempts that arrive at once ----------------------------------------------------------


def at_once(base: str, attempts: list[tuple[str, str]], door: str = CONSOLE,
            cookies: list[dict[str, str]] | None = None) -> list[int]:
    """Each (username, password) posted on its own thread, all released together once
    every thread holds a form's CSRF token; their statuses, in order. `cookies`, one
    dict an attempt, are sent with it (a browser's device cookie)."""
    ready = threading.Barrier(len(attempts))
    statuses: list[int] = [0] * len(attempts)

    def attempt(n: int, username: str, password: str) -> None:
        with requests.Session() as session:
            session.cookies.update((cookies or [{}] * len(attempts))[n])
            session.get(base + door, timeout=30)
            token = session.cookies["csrftoken"]
            ready.wait(timeout=30)
            statuses[n] = session.post(
                base + door,
                data={"username": username, "password": password, "csrfmiddlewaretoken": token},
                headers={"Referer": base + door}, allow_redirects=False, timeout=60,
            ).status_code

    threads = [threading.Thread(target=attempt, args=(n, *pair)) for n, pair in enumerate(attempts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    return statuses


@pytest.mark.django_db(transaction=True)
def test_15_simultaneous_wrong_passwords_make_at_most_5_checks_and_one_lock(
    live_server, operator, counted_checks
):
    statuses = at_once(live_server.url, [("operator", f"wrong-{n}") for n in range(15)])

    assert counted_checks()["verify"] <= 5
    assert sorted(set(statuses)) == [200, 429] and statuses.count(200) <= 4
    [locked] = actions("login_locked")
    assert locked["username"] == "operator" and locked["locked_by"] == "username"
    counted = [e for e in actions("login_failed") if not e.get("refused")]
    assert len(counted) == counted_checks()["verify"]
    assert len(actions("login_failed")) == 15
    # and the lock is on: the right password is refused unchecked
    assert at_once(live_server.url, [("operator", "operator-password")]) == [429]
    assert counted_checks()["verify"] <= 5


@pytest.mark.django_db(transaction=True)
def test_simultaneous_failures_from_one_address_make_at_most_20_checks_and_one_lock(
    live_server, operator, counted_checks
):
    # two tries for each of 15 usernames: no username reaches its limit of 5
    attempts = [(f"guess-{n % 15}", "wrong-password") for n in range(30)]

    statuses = at_once(live_server.url, attempts, door=ADMIN)

    checks = counted_checks()
    assert checks["verify"] + checks["encode"] <= 20
    assert statuses.count(429) >= 10
    [locked] = actions("login_locked")
    assert locked["locked_by"] == "address"
    assert at_once(live_server.url, [("operator", "operator-password")]) == [429]


@pytest.mark.django_db(transaction=True)
def test_simultaneous_long_usernames_are_each_counted_and_reach_the_address_lock(
    live_server, counted_checks
):
    statuses = at_once(live_server.url, [(f"{n}-{LONG}", "wrong-password") for n in range(25)])

    assert 500 not in statuses
    assert statuses.count(429) >= 5
    assert len([e for e in actions("login_failed") if not e.get("refused")]) == 20
    assert len(actions("login_locked")) == 1
    assert counted_checks() == {"verify": 0, "encode": 0}


@pytest.mark.django_db(transaction=True)
def test_15_simultaneous_wrong_codes_after_the_password_count_at_most_5_and_lock_once(
    live_server, operator
):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from tests.moderation.two_factor_helpers import wrong_code

    device = TOTPDevice.objects.create(user=operator, name="app", confirmed=True)
    code = wrong_code(b32encode(device.bin_key).decode())
    sessions = []
    for _ in range(15):  # one after another: fifteen logins at once would be throttled
        session = requests.Session()
        session.get(live_server.url + CONSOLE, timeout=30)
        answer = session.post(live_server.url + CONSOLE, data={
            "username": "operator", "password": "operator-password",
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        }, allow_redirects=False, timeout=30)
        assert answer.status_code == 302
        assert "/console/login/code/" in session.get(live_server.url + "/console/", timeout=30).url
        sessions.append(session)
    ready = threading.Barrier(len(sessions))
    statuses: list[int] = []

    def wrong(session: requests.Session) -> None:
        ready.wait(timeout=30)
        statuses.append(session.post(
            live_server.url + "/console/login/code/",
            data={"code": code, "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            allow_redirects=False, timeout=60,
        ).status_code)

    threads = [threading.Thread(target=wrong, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)

    counted = [e for e in actions("login_failed") if not e.get("refused")]
    assert 1 <= len(counted) <= 5 and {e["stage"] for e in counted} == {"code"}
    assert len(actions("login_failed")) == 15
    assert statuses.count(429) >= 10
    [locked] = actions("login_locked")
    assert locked["username"] == "operator"


@pytest.mark.django_db
def test_the_longest_username_a_request_can_carry_answers_within_a_second(db):
    # marks of alternating classes, whose normalisation (NFKC) takes quadratic time:
    # an over-long username is counted as given, never normalised
    username = "a" + "\u0301\u0316" * 120_000  # 480 kB of UTF-8, under the body's 1 MiB
    client = Client()
    client.get(CONSOLE)

    started = time.monotonic()
    response = post(client, username)
    elapsed = time.monotonic() - started

    assert response.status_code == 200 and elapsed < 1
    [failed] = actions("login_failed")
    assert failed["username"] == throttling.username_key(username)
