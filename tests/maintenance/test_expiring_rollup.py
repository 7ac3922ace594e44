"""The retention page's chart of receipts expiring per day (SPEC 8.3) reads a rollup the
forecast job keeps (maintenance/expiring.py), not the receipts (SPEC 11.7)."""

from datetime import UTC, datetime, timedelta

import pytest

from board.services import entry_delete
from maintenance import purges
from maintenance.expiring import expiring_by_day, expiring_roll_up
from maintenance.forecast import receipts_expiring_by_day
from maintenance.models import ExpiringReceipts
from moderation import actions as moderation
from receipts.models import Receipt
from tests.conftest import issue_agent, question, reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]

NOON = datetime(2030, 3, 10, 12, 0, 30, tzinfo=UTC)
DAY = timedelta(days=1)


def post_at(time_machine, agent, moment: datetime, payload: dict | None = None) -> int:
    time_machine.move_to(moment, tick=False)
    return agent.post(payload or question()).json()["id"]


def bars(now: datetime) -> dict[str, int]:
    """The chart's bars that are not zero, by day."""
    return {f"{day:%Y-%m-%d}": n for day, n in expiring_by_day(now=now) if n}


def rows() -> list[tuple]:
    return sorted(ExpiringReceipts.objects.values_list(
        "minute", "deleted", "expires_minute", "receipts"
    ))


def test_a_posts_receipt_is_on_its_expiry_day_once_the_job_has_run(agent, time_machine):
    # given: a thread posted at noon, read two minutes later (past the minute it was
    # written, which the chart counts from the receipts themselves)
    question_id = post_at(time_machine, agent, NOON)
    agent.post(reply(question_id))
    later = NOON + timedelta(minutes=2)
    assert bars(later) == {}

    # when
    expiring_roll_up(now=later)

    # then: both receipts expire thirty days on, the last bar
    assert bars(later) == {"2030-04-09": 2}
    assert expiring_by_day(now=later)[-1][1] == 2


def test_two_principals_with_their_own_retention_land_on_different_days(agent, time_machine):
    weekly = issue_agent("weekly", entry_retention=7 * 86400)
    post_at(time_machine, agent, NOON)
    post_at(time_machine, weekly, NOON)
    post_at(time_machine, weekly, NOON + timedelta(hours=13))

    later = NOON + timedelta(hours=14)
    expiring_roll_up(now=later)

    assert bars(later) == {"2030-03-17": 1, "2030-03-18": 1, "2030-04-09": 1}


def test_the_bars_run_from_now_to_the_same_time_thirty_days_on(agent, time_machine):
    # given: receipts expiring an hour before and after the read, and an hour before and
    # after the same time thirty days on
    hourly = issue_agent("hourly", entry_retention=3600)
    monthly = issue_agent("monthly", entry_retention=31 * 86400)
    post_at(time_machine, hourly, NOON - timedelta(hours=2))
    post_at(time_machine, hourly, NOON)
    post_at(time_machine, monthly, NOON - DAY - timedelta(hours=1))
    post_at(time_machine, monthly, NOON - DAY + timedelta(hours=1))

    # when
    now = NOON + timedelta(minutes=5)
    expiring_roll_up(now=now)

    # then: the first bar holds what expires after now, the last what expires up to then
    assert bars(now) == {"2030-03-10": 1, "2030-04-09": 1}


def test_a_post_stamped_before_a_run_and_committed_after_it_is_counted_by_the_next(
    agent, time_machine
):
    # given: a run that counted a post of its minute, then a post stamped a minute
    # before that one (its transaction began before the run and committed after)
    post_at(time_machine, agent, NOON)
    expiring_roll_up(now=NOON + timedelta(seconds=20))
    post_at(time_machine, agent, NOON - timedelta(minutes=1))
    assert bars(NOON + timedelta(minutes=2)) == {"2030-04-09": 1}

    # when the next run comes
    expiring_roll_up(now=NOON + timedelta(minutes=2))

    # then
    assert bars(NOON + timedelta(minutes=2)) == {"2030-04-09": 2}


def test_a_run_counts_only_the_minutes_since_the_last_it_counted(agent, time_machine):
    # given: a run that counted a post a minute before it, then a receipt that appears
    # stamped an hour before that
    post_at(time_machine, agent, NOON - timedelta(hours=2))
    post_at(time_machine, agent, NOON - timedelta(minutes=1))
    expiring_roll_up(now=NOON)
    post_at(time_machine, agent, NOON - timedelta(hours=1))

    # when
    expiring_roll_up(now=NOON + timedelta(minutes=1))

    # then: the run looked at its own minutes only, not at every receipt
    assert bars(NOON + timedelta(minutes=2)) == {"2030-04-09": 2}


def test_the_first_run_counts_every_live_receipt_once(agent, time_machine):
    # given: receipts written days before the rollup existed, one of them long expired
    post_at(time_machine, agent, NOON - 40 * DAY)
    post_at(time_machine, agent, NOON - 5 * DAY)
    post_at(time_machine, agent, NOON - 2 * DAY)

    # when
    first = expiring_roll_up(now=NOON)

    # then
    assert first.since is None
    assert bars(NOON) == {"2030-04-04": 1, "2030-04-07": 1}
    assert expiring_roll_up(now=NOON + timedelta(minutes=1)).since is not None


def test_a_deleted_receipt_moves_to_the_day_the_deletion_policy_takes_it(agent, time_machine):
    # given: a post counted at noon, deleted the next day under a 3-day deletion policy
    entry_id = post_at(time_machine, agent, NOON)
    expiring_roll_up(now=NOON + timedelta(minutes=1))
    moderation.retention_set(actor="test", policy="deletion", seconds=3 * 86400)
    deleted_at = NOON + DAY
    time_machine.move_to(deleted_at, tick=False)
    entry_delete(entry_id=entry_id, now=deleted_at)

    # when
    later = deleted_at + timedelta(minutes=2)
    expiring_roll_up(now=later)

    # then: it is on the day the purges will take it, no longer on its receipt's day
    assert bars(later) == {"2030-03-14": 1}


def test_a_receipt_the_deletion_purge_took_early_is_not_counted_at_its_old_expiry(
    agent, time_machine
):
    # given: a post deleted under a one-day deletion policy, counted before and after
    entry_id = post_at(time_machine, agent, NOON)
    expiring_roll_up(now=NOON + timedelta(minutes=1))
    moderation.retention_set(actor="test", policy="deletion", seconds=86400)
    entry_delete(entry_id=entry_id, now=NOON + timedelta(minutes=2))
    expiring_roll_up(now=NOON + timedelta(minutes=3))

    # when: the deletion purge has taken it, two days on
    later = NOON + 2 * DAY
    time_machine.move_to(later, tick=False)
    purges.purge_deletion_records(now=later, batch_size=100)
    assert not Receipt.objects.exists()
    expiring_roll_up(now=later)

    # then
    assert bars(later) == {}


def test_days_gone_by_are_dropped_and_a_second_run_changes_nothing(agent, time_machine):
    weekly = issue_agent("weekly", entry_retention=7 * 86400)
    moderation.retention_set(actor="test", policy="deletion", seconds=29 * 86400)
    post_at(time_machine, weekly, NOON)
    post_at(time_machine, agent, NOON)
    entry_delete(entry_id=post_at(time_machine, agent, NOON), now=NOON + timedelta(seconds=10))
    now = NOON + timedelta(minutes=1)
    expiring_roll_up(now=now)
    kept = rows()
    chart = expiring_by_day(now=now)

    # when: the same run again
    expiring_roll_up(now=now)

    # then
    assert rows() == kept and expiring_by_day(now=now) == chart
    assert bars(now) == {"2030-03-17": 1, "2030-04-08": 1, "2030-04-09": 1}

    # when: a run the day after the weekly receipt expired
    later = NOON + 8 * DAY
    time_machine.move_to(later, tick=False)
    expiring_roll_up(now=later)

    # then: its rows are gone; the others stay
    assert not ExpiringReceipts.objects.filter(expires_minute__lt=NOON + 8 * DAY).exists()
    assert ExpiringReceipts.objects.filter(expires_minute__gte=NOON + 29 * DAY).count() == 2
    assert bars(later) == {"2030-04-08": 1, "2030-04-09": 1}


def test_the_forecasts_chart_is_the_rollup_brought_up_to_date(agent, time_machine):
    # given: a post counted by an earlier forecast, then one posted and one deleted since
    # under a 3-day deletion policy
    post_at(time_machine, agent, NOON)
    receipts_expiring_by_day(now=NOON + timedelta(minutes=1))
    moderation.retention_set(actor="test", policy="deletion", seconds=3 * 86400)
    post_at(time_machine, agent, NOON + timedelta(minutes=10))
    gone = post_at(time_machine, agent, NOON + timedelta(minutes=11))
    entry_delete(entry_id=gone, now=NOON + timedelta(minutes=12))

    # when
    days = receipts_expiring_by_day(now=NOON + timedelta(minutes=15))

    # then: 31 bars from today, the live two on the last, the deleted one three days on
    assert len(days) == 31 and days[0][0] == datetime(2030, 3, 10, tzinfo=UTC)
    assert days[-1][1] == 2 and days[3][1] == 1
    assert sum(n for _, n in days) == 3
