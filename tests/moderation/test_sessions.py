"""Console sessions end after SETTLE_CONSOLE_SESSION_IDLE without a request and 24 hours
after login (SPEC 7.1); the console and the admin share one session."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db


def logged_in_by_form(username: str = "operator", password: str = "operator-password") -> Client:
    client = Client()
    response = client.post("/console/login/", {"username": username, "password": password})
    assert response.status_code == 302
    return client


def in_console(client: Client, path: str = "/console/") -> bool:
    return client.get(path).status_code == 200


def test_a_session_ends_after_the_idle_limit(operator):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()

    with time_machine.travel(start + timedelta(hours=8, seconds=1), tick=False):
        response = client.get("/console/")

    assert response.status_code == 302 and response["Location"].startswith("/console/login/")
    assert "_auth_user_id" not in client.session


def test_each_request_renews_the_idle_limit(operator):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()
    for hours in (7, 14):
        with time_machine.travel(start + timedelta(hours=hours), tick=False):
            assert in_console(client)

    with time_machine.travel(start + timedelta(hours=21), tick=False):
        assert in_console(client)
        # the stored session ends with the idle limit, not Django's two weeks
        stored = Session.objects.get(session_key=client.session.session_key)
        assert stored.expire_date <= timezone.now() + timedelta(hours=3)


def test_a_request_just_before_the_idle_limit_keeps_the_session(operator, settings):
    settings.SETTLE_CONSOLE_SESSION_IDLE = timedelta(seconds=60)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()
    for seconds in (40, 80, 139):
        with time_machine.travel(start + timedelta(seconds=seconds), tick=False):
            assert in_console(client), seconds

    with time_machine.travel(start + timedelta(seconds=200), tick=False):
        assert not in_console(client)


def test_admin_requests_renew_the_same_session(operator):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()
    with time_machine.travel(start + timedelta(hours=7), tick=False):
        assert client.get("/admin/").status_code == 200

    with time_machine.travel(start + timedelta(hours=14), tick=False):
        assert in_console(client)


def test_a_session_ends_24_hours_after_login_however_busy(operator):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()
    for hours in (6, 12, 18, 23):
        with time_machine.travel(start + timedelta(hours=hours), tick=False):
            assert in_console(client)

    with time_machine.travel(start + timedelta(hours=24, seconds=1), tick=False):
        assert not in_console(client)
        assert client.get("/admin/").status_code == 302


def test_the_idle_limit_comes_from_the_setting(operator, settings):
    settings.SETTLE_CONSOLE_SESSION_IDLE = timedelta(minutes=30)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = logged_in_by_form()

    with time_machine.travel(start + timedelta(minutes=31), tick=False):
        assert not in_console(client)


def test_logging_in_issues_a_new_session_id(operator):
    client = Client()
    session = client.session
    session["seen_the_login_page"] = True
    session.save()
    client.cookies["sessionid"] = before = session.session_key
    client.post("/console/login/", {"username": "operator", "password": "operator-password"})

    assert client.cookies["sessionid"].value != before
    assert Session.objects.filter(session_key=before).count() == 0


def test_logout_is_a_post(operator):
    client = logged_in_by_form()

    assert client.get("/console/logout/").status_code == 405
    assert in_console(client)
    assert client.post("/console/logout/").status_code == 302
    assert not in_console(client)


def test_the_idle_variable_is_parsed_as_a_duration():
    import os
    import subprocess
    import sys

    env = {**os.environ, "DEBUG": "true", "SECRET_KEY": "dev",
           "SETTLE_CONSOLE_SESSION_IDLE": "eight hours"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    result = subprocess.run([sys.executable, "manage.py", "check"], env=env,
                            capture_output=True, text=True, timeout=60)

    assert result.returncode != 0
    assert "SETTLE_CONSOLE_SESSION_IDLE" in result.stderr + result.stdout
