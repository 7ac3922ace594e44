"""Celery's production options (SPEC 12): late acknowledgement, rejection on a lost
worker, a time limit on every task, and no task scheduled past the visibility timeout."""

import pytest

from board.celery import (
    BROKER_VISIBILITY_TIMEOUT,
    LONGEST_COUNTDOWN,
    CountdownTooLong,
    app,
)


def settle_tasks():
    app.loader.import_default_modules()
    return [task for name, task in app.tasks.items() if not name.startswith("celery.")]


def test_it_acknowledges_a_task_after_it_ran_and_requeues_it_when_the_worker_dies():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True


def test_it_limits_the_time_of_every_task():
    tasks = settle_tasks()

    assert tasks, "no Settle task was registered"
    for task in tasks:
        hard = task.time_limit or app.conf.task_time_limit
        soft = task.soft_time_limit or app.conf.task_soft_time_limit
        assert hard and soft and soft < hard, task.name


def test_it_keeps_the_visibility_timeout_above_the_longest_task():
    longest = max(task.time_limit or app.conf.task_time_limit for task in settle_tasks())

    assert app.conf.broker_transport_options["visibility_timeout"] == BROKER_VISIBILITY_TIMEOUT
    assert BROKER_VISIBILITY_TIMEOUT > longest + LONGEST_COUNTDOWN - 1


def test_it_keeps_the_transport_options_the_settings_chose(settings):
    chosen = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})

    options = app.conf.broker_transport_options

    assert {key: options[key] for key in chosen} == chosen


def test_it_refuses_a_countdown_past_the_visibility_timeout():
    task = app.tasks["maintenance.purge_attempts"]

    with pytest.raises(CountdownTooLong):
        task.apply_async(kwargs={"dry_run": True}, countdown=LONGEST_COUNTDOWN + 1)
