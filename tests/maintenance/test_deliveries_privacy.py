"""Secrets and URLs stay private: the admin shows no secret and no URL path, logs carry
neither, and evidence keeps no response body."""

import logging

import pytest
from django.test import Client

from maintenance.deliveries import endpoints
from tests.maintenance.conftest import delivery_of, drive, endpoint_for, post_entry
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [pytest.mark.usefixtures("delivery_settings")]


@pytest.mark.django_db
def test_the_admin_shows_endpoints_read_only_without_secret_or_path(operator):
    endpoint, secret = endpoints.endpoint_add(
        name="private-path", url="https://hooks.example/p/TOKEN-IN-PATH?key=QUERYKEY"
    )
    client = Client()
    client.force_login(operator)

    page = client.get(f"/admin/maintenance/endpoint/{endpoint.pk}/change/")
    listing = client.get("/admin/maintenance/endpoint/")

    for response in (page, listing):
        assert response.status_code == 200
        body = response.content.decode()
        assert secret not in body and secret[6:20] not in body
        assert "TOKEN-IN-PATH" not in body and "QUERYKEY" not in body
    assert "https://hooks.example" in listing.content.decode()
    assert b'name="_save"' not in page.content  # read-only
    assert client.get("/admin/maintenance/endpoint/add/").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_logs_carry_no_url_path_secret_or_exception_text(receiver, caplog):
    endpoint_for(receiver, supports="dedupe")
    receiver.script = [Behaviour(hang=True), Behaviour(status=500), Behaviour(close=True)]

    with caplog.at_level(logging.DEBUG):
        delivery = drive(delivery_of(post_entry()))

    assert delivery.state in {"succeeded", "outcome_unknown", "failed"}
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "maintenance.outbox" in {record.name for record in caplog.records}
    assert "/hooks/settle" not in text and "receiver-secret" not in text
    for secret in receiver.secrets:
        assert secret not in text and secret[6:] not in text
    assert "timed out" not in text and "Connection reset" not in text
