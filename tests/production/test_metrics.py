"""/metrics (SPEC 12): who may read it, and counts that hold across worker processes."""

import json
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from ipaddress import ip_network

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from board.models import Entry
from maintenance import purges as maintenance
from maintenance.deliveries import endpoints
from maintenance.models import MaintenanceRun
from tests.board.mcp_support import modern_call, tool_result
from tests.conftest import question
from tests.production.conftest import call

STRANGER = "203.0.113.5"
PROXY = "10.0.0.1"


def samples(text: str, name: str) -> dict[tuple, float]:
    """The samples of one series, by their labels (sorted pairs)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def posts(text: str, route: str = "api") -> dict[str, float]:
    return {
        dict(labels)["outcome"]: value
        for labels, value in samples(text, "settle_posts_total").items()
        if dict(labels)["route"] == route and value
    }


# --- Who may read it -----------------------------------------------------------------------


@pytest.mark.django_db
def test_it_answers_a_loopback_client_by_default(client):
    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert b"settle_request_duration_seconds" in response.content


@pytest.mark.django_db
def test_it_does_not_exist_for_another_address(client):
    response = client.get("/metrics", REMOTE_ADDR=STRANGER)

    assert response.status_code == 404
    assert b"settle_" not in response.content


@pytest.mark.django_db
def test_it_answers_an_address_in_an_allowed_network(client, settings):
    settings.SETTLE_METRICS_ALLOW = [ip_network("203.0.113.0/24")]

    assert client.get("/metrics", REMOTE_ADDR=STRANGER).status_code == 200
    assert client.get("/metrics").status_code == 404  # loopback is no longer listed


@pytest.mark.django_db
def test_it_answers_the_metrics_token_from_anywhere(client, settings):
    settings.SETTLE_METRICS_TOKEN = "scrape-token-1234"

    good = client.get("/metrics", REMOTE_ADDR=STRANGER,
                      HTTP_AUTHORIZATION="Bearer scrape-token-1234")
    bad = client.get("/metrics", REMOTE_ADDR=STRANGER,
                     HTTP_AUTHORIZATION="Bearer scrape-token-1235")

    assert (good.status_code, bad.status_code) == (200, 404)


@pytest.mark.django_db
def test_an_empty_token_setting_opens_nothing(client, settings):
    settings.SETTLE_METRICS_TOKEN = ""

    response = client.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_AUTHORIZATION="Bearer ")

    assert response.status_code == 404


@pytest.mark.django_db
def test_it_reads_the_client_address_through_trusted_proxies_only(client, settings):
    settings.SETTLE_TRUSTED_PROXIES = [ip_network(f"{PROXY}/32")]

    via_proxy = client.get("/metrics", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="127.0.0.1")
    proxy_for_stranger = client.get("/metrics", REMOTE_ADDR=PROXY,
                                    HTTP_X_FORWARDED_FOR=STRANGER)
    forged = client.get("/metrics", REMOTE_ADDR=STRANGER, HTTP_X_FORWARDED_FOR="127.0.0.1")

    assert via_proxy.status_code == 200
    assert proxy_for_stranger.status_code == 404
    assert forged.status_code == 404


# --- What it counts ------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_counts_an_mcp_post_under_the_mcp_route(client, roomy_limits):
    before = posts(client.get("/metrics").content.decode(), route="mcp")

    tool_result(client, "post_entry", question())
    tool_result(client, "post_entry", question(request_id="not-a-uuid"))

    after = posts(client.get("/metrics").content.decode(), route="mcp")
    assert after.get("created", 0) - before.get("created", 0) == 1
    assert after.get("invalid", 0) - before.get("invalid", 0) == 1
    assert Entry.objects.count() == 1


@pytest.mark.django_db
def test_it_counts_an_mcp_post_with_an_unknown_token_as_unauthorized(client):
    before = posts(client.get("/metrics").content.decode(), route="mcp")

    refused = modern_call(client, "post_entry", question(), token="settle_not-a-token")
    listed = modern_call(client, "list_threads", {}, token="settle_not-a-token")

    after = posts(client.get("/metrics").content.decode(), route="mcp")
    assert refused.status_code == 401 and listed.status_code == 401
    # The post is counted; the refused read is not a post.
    assert after.get("unauthorized", 0) - before.get("unauthorized", 0) == 1
    assert Entry.objects.count() == 0


@pytest.mark.django_db
def test_it_reports_purged_rows_and_last_success_from_the_recorded_runs(client, agent):
    payload = question()
    agent.post(payload)
    agent.post(payload)  # a replay: its attempt is logged (the post's is its receipt)
    # Seven days later the attempt log of that replay is past SETTLE_ATTEMPT_RETENTION.
    later = timezone.now() + timedelta(days=8)
    result = maintenance.purge_attempts(now=later, batch_size=100)
    assert result.counts["attempts"] >= 1
    maintenance.job_run(job="purge-attempts", purge=maintenance.purge_attempts)
    run = MaintenanceRun.objects.get(job="purge-attempts")

    text = client.get("/metrics").content.decode()

    purged = samples(text, "settle_purged_rows_total")
    assert purged[(("kind", "attempts"),)] == run.counts["attempts"]
    last = samples(text, "settle_job_last_success_timestamp_seconds")
    assert last == {(("job", "purge-attempts"),): pytest.approx(run.finished_at.timestamp())}


# --- Across worker processes ---------------------------------------------------------------


def outcome_of(status: int, body: bytes) -> str:
    if status in (200, 201):
        return {201: "created", 200: "replayed"}[status]
    return json.loads(body)["error"]["code"]


@pytest.mark.django_db(transaction=True)
def test_counts_match_a_scripted_sequence_sent_across_several_workers(serve):
    served = serve(WEB_CONCURRENCY="3", SETTLE_SOURCE_HOURLY_LIMIT="30")
    every_worker_answers(served, workers=3)
    first = [question() for _ in range(8)]
    replays = [p for p in first for _ in range(2)]
    conflicts = [{**p, "body": "Something else entirely."} for p in first[:3]]
    overflow = [question() for _ in range(30)]

    def send(payload: dict) -> str:
        status, _, body = call(served.base, "/api/v1/entries", method="POST", body=payload)
        return outcome_of(status, body)

    tally: Counter = Counter()
    with ThreadPoolExecutor(max_workers=6) as pool:
        for phase in (first, replays, conflicts, overflow):
            tally.update(pool.map(send, phase))

    scrapes = [call(served.base, "/metrics")[2].decode() for _ in range(4)]

    assert {"created", "replayed", "conflict", "rate_limited"} <= set(tally)
    for text in scrapes:  # whichever worker answered the scrape
        assert posts(text) == {_outcome(code): n for code, n in tally.items()}
    assert Entry.objects.count() == tally["created"]
    # The posts really were answered by more than one process.
    assert len(list(served.metrics_dir.glob("counter_*.db"))) >= 2


def every_worker_answers(served, *, workers: int) -> None:
    """Wait until each worker has answered a request: gunicorn is up when its first worker
    answers, and on a busy machine the others may still be loading Django while a short
    scripted sequence runs, all of it then answered by one process. Fresh request_ids
    (no token: no database, no attempt counted) from 6 clients at once, until each
    worker's histogram file exists."""
    deadline = time.monotonic() + 60
    with ThreadPoolExecutor(max_workers=6) as pool:
        while len(list(served.metrics_dir.glob("histogram_*.db"))) < workers:
            assert time.monotonic() < deadline, "not every gunicorn worker answered"
            list(pool.map(lambda _: call(served.base, "/api/v1/request-ids", method="POST"),
                          range(12)))


def _outcome(code: str) -> str:
    return {"invalid_request": "invalid", "bad_request": "invalid"}.get(code, code)


@pytest.mark.django_db
def test_it_counts_deliveries_by_state(client, agent, settings, roomy_limits):
    # given: two endpoints, one disabled at once, and a post announced to the enabled one
    settings.SETTLE_PUBLIC_URL = "https://settle.example"
    endpoints.endpoint_add(name="kept", url="https://kept.example/hook")
    endpoints.endpoint_add(name="gone", url="https://gone.example/hook")
    endpoints.endpoint_disable(name="gone")
    assert agent.post(question()).status_code == 201

    # when
    text = client.get("/metrics").content.decode()

    # then: every state is a sample; the one delivery waits as accepted
    by_state = {labels[0][1]: value for labels, value in samples(text, "settle_deliveries").items()}
    assert by_state["accepted"] == 1
    assert sum(by_state.values()) == 1
    assert {"running", "succeeded", "failed", "outcome_unknown"} <= set(by_state)