"""The settings of the Celery workers tests start (tests/celery_worker.py): board.settings,
with the embedded filesystem broker polled every 0.1 s instead of kombu's every second.

A worker on that broker takes one message a poll once its one prefetched task is done,
so at kombu's pace a test waiting for the fifth job of a queue waits five seconds. Redis
(CI on PostgreSQL) is not polled; its workers run on board.settings as they are.
"""

from board.settings import *  # noqa: F403
from board.settings import CELERY_BROKER_URL

if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {  # noqa: F405
        **CELERY_BROKER_TRANSPORT_OPTIONS,  # noqa: F405
        "polling_interval": 0.1,
    }
