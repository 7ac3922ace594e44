"""The Celery application. Tasks live in each app's `tasks` module, found by autodiscovery
(`maintenance.tasks`, which imports `maintenance.deliveries.tasks`, and `moderation.tasks`);
the beat schedule is `CELERY_BEAT_SCHEDULE` in board/settings.py.

Production options (SPEC 12), the same on every broker:

- A task is acknowledged after it ran (`acks_late`), and a task whose worker died under it
  (killed, out of memory, host lost) goes back to the queue (`reject_on_worker_lost`)
  instead of being dropped. That runs some tasks twice, which is why every task is
  idempotent: a purge deletes what is expired now, a job run records what it did.
- Every task has a time limit: the soft one raises inside the task so it can stop
  cleanly; the hard one kills the child process if it did not.
- Redis redelivers a message nobody acknowledged after its visibility timeout, even if
  a worker is still running it. The timeout therefore sits far above the hard limit, and
  no task may be scheduled further ahead (countdown or eta) than it: Redis would hand the
  waiting message to a second worker. RabbitMQ has no visibility timeout; its
  `consumer_timeout` (30 minutes by default) plays the same part and sits above the
  hard limit too.
"""

import os
import sys
from datetime import UTC, datetime

from celery import Celery, Task
from celery.signals import worker_init
from kombu.transport import TRANSPORT_ALIASES

from board.serving.environment import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")

# The longest a task may run. Purges stop themselves after SETTLE_PURGE_TIME_BUDGET
# (default two minutes) and must fit under the soft limit with room to commit.
TASK_SOFT_TIME_LIMIT = 300
TASK_TIME_LIMIT = 330
# Far above TASK_TIME_LIMIT: a redelivery must mean the worker is gone, not slow.
BROKER_VISIBILITY_TIMEOUT = 3600


class CountdownTooLong(ValueError):
    """A task scheduled further ahead than the broker's visibility timeout allows."""


# The furthest ahead a task may be scheduled: it must still run, and finish, before
# Redis would redeliver it.
LONGEST_COUNTDOWN = BROKER_VISIBILITY_TIMEOUT - TASK_TIME_LIMIT


class SettleTask(Task):
    """Every task of the app: refuses a countdown or eta past LONGEST_COUNTDOWN.

    Enforced here rather than only written down: a message held past the visibility
    timeout is handed to a second worker and runs twice. Longer waits belong in a stored
    next-attempt time that a beat job picks up (SPEC 9).
    """

    def apply_async(self, *args, **options):
        ahead = _seconds_ahead(options.get("countdown"), options.get("eta"))
        if ahead is not None and ahead > LONGEST_COUNTDOWN:
            raise CountdownTooLong(
                f"{self.name} scheduled {int(ahead)}s ahead; at most {LONGEST_COUNTDOWN}s "
                f"(board/celery.py)"
            )
        return super().apply_async(*args, **options)


def _seconds_ahead(countdown: float | None, eta: datetime | None) -> float | None:
    if countdown is not None:
        return float(countdown)
    if eta is None:
        return None
    if eta.tzinfo is None:
        eta = eta.replace(tzinfo=UTC)
    return (eta - datetime.now(UTC)).total_seconds()


# `filesystem://` names Settle's embedded broker (board/serving/embedded_broker.py): kombu's own
# transport with each message written whole before a worker can see it. By the scheme, not
# `broker_transport`, which would outrank whatever URL the broker is later given.
TRANSPORT_ALIASES["filesystem"] = "board.serving.embedded_broker:Transport"

app = Celery("settle", task_cls=SettleTask)


@app.on_configure.connect
def _settings_or_exit(sender: Celery, **kwargs) -> None:
    # Before Celery reads them, so a configuration error is one line, not a traceback.
    # (An exception would not do: Celery logs and swallows what a signal handler raises.)
    settings_or_exit()


@worker_init.connect
def _purge_budget_or_exit(**kwargs) -> None:
    # A purge's own budget must end before the soft limit cuts it off mid-batch. Checked
    # where the limit applies: a worker refuses to start, a web process is left alone.
    from django.conf import settings

    budget = int(settings.SETTLE_PURGE_TIME_BUDGET.total_seconds())
    if budget > TASK_SOFT_TIME_LIMIT - 60:
        print(
            f"settle: SETTLE_PURGE_TIME_BUDGET must be at most {TASK_SOFT_TIME_LIMIT - 60}s "
            f"(a task's soft time limit is {TASK_SOFT_TIME_LIMIT}s), not {budget}s",
            file=sys.stderr,
        )
        sys.exit(1)


app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    task_soft_time_limit=TASK_SOFT_TIME_LIMIT,
    task_time_limit=TASK_TIME_LIMIT,
    # One message reserved at a time: a worker that dies takes fewer back to the queue,
    # and long tasks do not sit behind each other in one worker's buffer.
    worker_prefetch_multiplier=1,
)
app.autodiscover_tasks()


@app.on_after_configure.connect
def _visibility_timeout(sender: Celery, **kwargs) -> None:
    # Merged into the transport options settings.py chose (the embedded broker's folders);
    # kombu's filesystem transport ignores it, Redis and SQS read it.
    options = dict(sender.conf.broker_transport_options or {})
    options["visibility_timeout"] = BROKER_VISIBILITY_TIMEOUT
    sender.conf.broker_transport_options = options
