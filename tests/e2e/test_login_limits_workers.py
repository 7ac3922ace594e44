"""SPEC 7.1's login limits hold across gunicorn's worker processes, which share nothing
but the database: 15 wrong passwords at once for one username make at most 5 password
checks and one `login_locked`. Every password here is wrong, so each check that ran is
one `login_failed` that was not refused. A browser holding the username's device cookie
is counted apart: 5 checks more for each such device, never more."""

import pytest

from moderation.models import AuditEvent
from tests.moderation.test_login_devices import live_device_cookie
from tests.moderation.test_login_limits_hold import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_15_wrong_passwords_at_once_on_several_workers_check_at_most_5(gunicorn, operator):
    statuses = at_once(gunicorn, [("operator", f"wrong-{n}") for n in range(15)])

    failed = [e.details for e in AuditEvent.objects.filter(action="login_failed")]
    checked = [f for f in failed if not f.get("refused")]
    assert len(failed) == 15 and 1 <= len(checked) <= 5
    assert statuses.count(429) >= 10 and 500 not in statuses
    assert AuditEvent.objects.filter(action="login_locked").count() == 1


def test_long_usernames_at_once_on_several_workers_reach_the_address_lock(gunicorn):
    statuses = at_once(gunicorn, [(f"{n}-" + "x" * 300, "wrong-password") for n in range(25)])

    assert 500 not in statuses and statuses.count(429) >= 5
    failed = [e.details for e in AuditEvent.objects.filter(action="login_failed")]
    assert len([f for f in failed if not f.get("refused")]) == 20
    assert AuditEvent.objects.filter(action="login_locked").count() == 1


def test_attempts_at_once_check_at_most_5_for_each_device_and_5_without_one(gunicorn, operator):
    mine, other = live_device_cookie(gunicorn), live_device_cookie(gunicorn)
    cookies = [mine] * 8 + [other] * 8 + [{}] * 8

    statuses = at_once(gunicorn, [("operator", f"wrong-{n}") for n in range(24)], cookies=cookies)

    assert 500 not in statuses and statuses.count(429) >= 9
    checked: dict[str, int] = {}
    for failure in AuditEvent.objects.filter(action="login_failed"):
        if not failure.details.get("refused"):
            device = failure.details.get("device", "")
            checked[device] = checked.get(device, 0) + 1
    assert len(checked) == 3 and all(1 <= n <= 5 for n in checked.values())
