"""End to end with a real Celery worker: a post queues one message on commit, the worker
fans it out and sends each delivery."""

import pytest
from django.conf import settings as django_settings

from maintenance.deliveries.models import Delivery
from tests.celery_worker import celery_worker, wait_for
from tests.maintenance.conftest import PUBLIC_URL, endpoint_for, post_entry

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def test_a_worker_sends_a_new_entry_to_every_endpoint(receiver, tmp_path):
    endpoint_for(receiver, name="first")
    endpoint_for(receiver, name="second")
    env = {"SETTLE_PUBLIC_URL": PUBLIC_URL, "SETTLE_BROKER_DIR": str(django_settings.BROKER_DIR)}

    with celery_worker(tmp_path, beat=False, env=env) as log:
        entry = post_entry()
        done = wait_for(
            lambda: Delivery.objects.filter(entry_id=entry.pk, state="succeeded").count() == 2,
            seconds=90,
        )

    assert done, log.read_text()[-3000:]
    posts = receiver.posts()
    assert len(posts) == 2 and all(seen.verified for seen in posts)
    assert {seen.headers["webhook-id"] for seen in posts} == {
        str(pk) for pk in Delivery.objects.filter(entry_id=entry.pk).values_list("pk", flat=True)
    }
