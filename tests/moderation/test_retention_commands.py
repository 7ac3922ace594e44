"""`manage.py retention`, `hold` and `issue_token --retention` (SPEC 8.1, 8.2, 10)."""

import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from board.models import AgentToken, Entry, Hold, Principal, RetentionPolicy
from moderation.models import AuditEvent
from tests.celery_worker import test_database_url
from tests.conftest import issue_agent, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

DAY = 86400


def run(*args) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue().splitlines()


def shown() -> dict:
    lines = run("retention", "show", "--json")
    assert len(lines) == 1
    return json.loads(lines[0])


def test_show_json_prints_one_object_keyed_by_the_five_policies(db):
    issue_agent("brief", entry_retention=7 * DAY)

    policies = shown()

    assert set(policies) == {"entry", "deletion", "tombstone", "attempt", "delivery"}
    assert policies["entry"] == {
        "value": 30 * DAY, "source": "environment", "overrides": {"brief": 7 * DAY},
    }
    assert policies["tombstone"] == {"value": 400 * DAY, "source": "environment"}


def test_set_and_clear_change_the_value_and_its_source(db):
    run("retention", "set", "deletion", "12h")
    assert shown()["deletion"] == {"value": 12 * 3600, "source": "console"}

    run("retention", "clear", "deletion")
    assert shown()["deletion"] == {"value": 30 * DAY, "source": "environment"}
    assert AuditEvent.objects.filter(target_type="retention").count() == 2


def test_set_for_a_principal_overrides_the_entry_policy(db):
    issue_agent("brief")

    run("retention", "set", "entry", "7d", "--principal", "brief")

    assert Principal.objects.get(name="brief").entry_retention == 7 * DAY
    assert shown()["entry"]["overrides"] == {"brief": 7 * DAY}
    run("retention", "clear", "entry", "--principal", "brief")
    assert shown()["entry"]["overrides"] == {}


@pytest.mark.parametrize(
    "args, words",
    [
        (["set", "entry", "59m"], "entry: 59m is out of bounds"),
        (["set", "entry", "3651d"], "entry: 3651d is out of bounds"),
        (["set", "tombstone", "23h"], "tombstone: 23h is out of bounds"),
        (["set", "attempt", "366d"], "attempt: 366d is out of bounds"),
        (["set", "delivery", "soon"], "delivery: 'soon' is not a duration"),
        (["set", "entry", "-1h"], "entry: '-1h' is not a duration"),
        # ASCII digits only: int() reads other scripts' digits, and "١٢h" set 12 hours.
        (["set", "entry", "\u0661\u0662h"], "entry: '\u0661\u0662h' is not a duration"),
        (["set", "tombstone", "\uff13\uff10d"], "tombstone: '\uff13\uff10d' is not a duration"),
        (["set", "attempt", "\u00b2h"], "attempt: '\u00b2h' is not a duration"),
        (["set", "entry", "-1h", "--principal", "brief"], "entry: '-1h' is not a duration"),
        (["set", "forever", "1d"], "forever: unknown policy"),
        (["set", "deletion", "1d", "--principal", "brief"], "deletion: --principal"),
        (["set", "entry", "1d", "--principal", "nobody"], "entry: unknown principal"),
        (["clear", "attempt", "--principal", "brief"], "attempt: --principal"),
    ],
)
def test_it_refuses_with_one_line_and_changes_nothing(db, args, words):
    issue_agent("brief")

    with pytest.raises(CommandError) as refused:
        run("retention", *args)

    assert words in str(refused.value) and "\n" not in str(refused.value)
    assert not RetentionPolicy.objects.exists()
    assert Principal.objects.get(name="brief").entry_retention is None
    assert not AuditEvent.objects.filter(target_type="retention").exists()


def test_bounds_are_inclusive(db):
    run("retention", "set", "entry", "1h")
    run("retention", "set", "tombstone", "3650d")
    run("retention", "set", "attempt", "365d")

    assert shown()["entry"]["value"] == 3600
    assert shown()["tombstone"]["value"] == 3650 * DAY


def test_issue_token_with_a_retention_sets_the_principals_own(db):
    run("issue_token", "brief", "--retention", "2d")

    assert Principal.objects.get(name="brief").entry_retention == 2 * DAY


def test_issue_token_with_a_retention_audits_the_value_before_and_after(db, settings):
    run("issue_token", "brief", "--retention", "2d")

    event = AuditEvent.objects.get(action="retention_set")
    assert event.details == {
        "policy": "entry", "principal": "brief",
        "before": {"seconds": int(settings.SETTLE_ENTRY_RETENTION.total_seconds()),
                   "source": "environment"},
        "after": {"seconds": 2 * DAY, "source": "console"},
    }


def test_issue_token_out_of_bounds_issues_no_token(db):
    with pytest.raises(CommandError, match="entry"):
        run("issue_token", "brief", "--retention", "30m")

    assert not AgentToken.objects.exists() and not Principal.objects.exists()


def test_issue_token_with_non_ascii_digits_issues_no_token(db):
    with pytest.raises(CommandError) as refused:
        run("issue_token", "brief", "--retention", "\u0661\u0662h")

    assert str(refused.value) == (
        "--retention: entry: '\u0661\u0662h' is not a duration "
        "(whole seconds, or a number with s, m, h, d)"
    )
    assert not AgentToken.objects.exists() and not Principal.objects.exists()


def test_a_refusal_exits_non_zero_with_one_line():
    done = subprocess.run(
        [sys.executable, "manage.py", "retention", "set", "entry", "0s"],
        capture_output=True, text=True, timeout=60,
    )

    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == ["CommandError: entry: 0s is out of bounds "
                                                "(1h to 3650d)"]


def test_hold_add_prints_the_id_on_its_last_line_and_list_shows_it(agent):
    question_id = agent.post(question()).json()["id"]
    reply_id = agent.post(reply(question_id)).json()["id"]

    added = run("hold", "add", "--thread", str(reply_id), "--reason", "investigation")
    by_principal = run("hold", "add", "--principal", agent.name, "--reason", "leak")

    hold = Hold.objects.get(pk=int(added[-1]))
    assert hold.thread_id == question_id
    rows = [json.loads(line) for line in run("hold", "list", "--json")]
    assert [(r["id"], r["thread"], r["principal"]) for r in rows] == [
        (hold.pk, question_id, None), (int(by_principal[-1]), None, agent.name),
    ]
    assert rows[0]["reason"] == "investigation" and rows[0]["created_at"]


def test_hold_release_takes_it_off_the_list_and_is_audited(agent):
    question_id = agent.post(question()).json()["id"]
    hold_id = run("hold", "add", "--thread", str(question_id), "--reason", "x")[-1]

    run("hold", "release", hold_id, "--reason", "case closed")

    assert run("hold", "list", "--json") == []
    assert Hold.objects.get(pk=int(hold_id)).release_reason == "case closed"
    events = AuditEvent.objects.filter(target_type="hold").order_by("id")
    assert list(events.values_list("action", flat=True)) == ["hold_add", "hold_release"]


@pytest.mark.parametrize(
    "args",
    [
        ["add", "--thread", "999999", "--reason", "x"],
        ["add", "--principal", "nobody", "--reason", "x"],
        ["add", "--thread", "THREAD", "--reason", "   "],
        ["release", "999999", "--reason", "x"],
        ["release", "HOLD", "--reason", " "],
    ],
)
def test_hold_refusals_change_nothing(agent, args):
    question_id = agent.post(question()).json()["id"]
    hold = Hold.objects.create(
        thread_id=question_id, reason="r", created_at="2026-01-01T00:00Z", created_by="t"
    )
    args = [str(question_id) if a == "THREAD" else str(hold.pk) if a == "HOLD" else a
            for a in args]

    with pytest.raises(CommandError):
        run("hold", *args)

    assert Hold.objects.count() == 1 and Hold.objects.get().released_at is None
    assert not AuditEvent.objects.filter(target_type="hold").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "args, line",
    [
        (["hold", "add", "--thread", "999999", "--reason", "x"],
         "CommandError: thread 999999: no such entry"),
        (["hold", "add", "--thread", "QUESTION", "--reason", "  "],
         "CommandError: a reason is required (--reason TEXT)"),
        (["hold", "release", "999999", "--reason", "x"],
         "CommandError: hold 999999: no such active hold"),
        (["erase", "nobody", "--reason", "spam"], "CommandError: no agent is named 'nobody'"),
        (["erase", "agent", "--reason", " "],
         "CommandError: --reason: a reason is required to erase entries"),
        (["erase", "agent", "--reason", "spam", "--since", "2026-05-01"],
         "CommandError: --since: '2026-05-01' needs an offset or Z"),
    ],
    ids=["hold-unknown-thread", "hold-blank-reason", "release-unknown", "erase-unknown",
         "erase-blank-reason", "erase-since-without-offset"],
)
def test_hold_and_erase_refusals_exit_non_zero_with_one_line(agent, args, line):
    # given: the test database, which the command's own process uses
    question_id = agent.post(question()).json()["id"]
    args = [str(question_id) if a == "QUESTION" else a for a in args]
    events = AuditEvent.objects.count()

    # when
    done = subprocess.run(
        [sys.executable, "manage.py", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, "DATABASE_URL": test_database_url(), "DEBUG": "true",
             "SECRET_KEY": "test-only"},
    )

    # then: one line, and nothing changed
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [line]
    assert done.stdout == ""
    assert not Hold.objects.exists() and AuditEvent.objects.count() == events
    assert Entry.objects.filter(deleted_at__isnull=False).count() == 0
