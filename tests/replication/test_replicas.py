"""Read replicas (SPEC 12.1): public reads on a streaming standby, never behind a reader.

A private primary and a standby made by `pg_basebackup -R` (tests/clusters.py), Settle's
gunicorn on the primary with the standby as its replica and Redis as the shared cache.
The standby applies WAL `APPLY_DELAY` late on purpose (`recovery_min_apply_delay`) in
the read-your-writes tests, so a read that went to it would miss what was just written.
"""

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

from tests import clusters
from tests.e2e.conftest import ROOT, gunicorn_serving

pytestmark = [
    pytest.mark.replication,
    pytest.mark.skipif(clusters.missing() is not None, reason=str(clusters.missing())),
]

APPLY_DELAY = "4s"
CACHE_URL = "redis://127.0.0.1:6379/13"


def call(base: str, path: str, *, token: str | None = None, body: dict | None = None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers=headers,
                                     method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def question(marker: str) -> dict:
    return {
        "request_id": str(uuid.uuid4()), "type": "question", "title": f"Replica {marker}",
        "body": f"Which database answers {marker}?", "actor": {"name": "replica-test"},
        "submission_mode": "autonomous",
    }


def manage(database_url: str, *args: str, **env: str) -> str:
    env = {"DATABASE_URL": database_url, "DEBUG": "true", "SECRET_KEY": "replica-test",
           "PATH": "/usr/bin:/bin", **env}
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout


def entry_scans(cluster: clusters.Cluster) -> int:
    """How often the entries table was read on `cluster` (its own statistics: a standby
    counts the reads it serves)."""
    (scans,), = cluster.sql(
        "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables"
        " WHERE relname = 'board_entry'"
    )
    return scans


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """The primary, a delayed standby, a token, and Settle serving them."""
    with clusters.primary() as primary:
        manage(primary.url(), "migrate", "--noinput")
        token = manage(primary.url(), "issue_token", "replica-writer").strip().splitlines()[-1]
        with clusters.standby(primary) as standby:
            standby.configure(recovery_min_apply_delay=APPLY_DELAY)
            log = tmp_path_factory.mktemp("replicas") / "gunicorn.log"
            with gunicorn_serving(
                log, primary.url(), SETTLE_REPLICA_URLS=standby.url(),
                SETTLE_CACHE_URL=CACHE_URL, SETTLE_SOURCE_HOURLY_LIMIT="100000",
                # A connection a request: a server flushes a backend's table statistics
                # when it ends, so entry_scans counts every read at once.
                SETTLE_DB_CONN_MAX_AGE="0",
                # Long enough that a standby trailing by its apply delay, a command's
                # start-up and a check stays fit: a test then shows what decided a read.
                SETTLE_REPLICA_MAX_LAG="30s",
                SETTLE_OVERALL_HOURLY_LIMIT="100000",
            ) as port:
                yield {"base": f"http://127.0.0.1:{port}", "primary": primary,
                       "standby": standby, "token": token}


def settled_on_standby(board) -> None:
    """Let the delayed standby replay everything written so far."""
    clusters.caught_up(board["primary"], board["standby"])


def replayed_a_recent_post(board) -> None:
    """A post the standby has replayed, a few seconds old: while it trails the primary,
    its lag is then the age of that post, under SETTLE_REPLICA_MAX_LAG, so the
    standby is fit to answer strangers."""
    status, _ = call(board["base"], "/api/v1/entries", token=board["token"],
                     body=question("warm-up"))
    assert status == 201
    settled_on_standby(board)


def listed_ids(board, token: str | None = None) -> list[int]:
    status, body = call(board["base"], "/api/v1/threads", token=token)
    assert status == 200
    return [item["id"] for item in json.loads(body)["items"]]


def test_it_serves_public_reads_from_the_replica(board):
    # given: a question the standby has replayed
    status, body = call(board["base"], "/api/v1/entries", token=board["token"],
                        body=question("served"))
    assert status == 201
    thread_id = json.loads(body)["id"]
    settled_on_standby(board)
    time.sleep(1.2)  # past the writer's process-local look at the standby
    on_standby, on_primary = entry_scans(board["standby"]), entry_scans(board["primary"])

    # when: a stranger reads, over the API and the public pages
    for _ in range(10):
        assert call(board["base"], "/api/v1/threads")[0] == 200
        assert call(board["base"], f"/api/v1/threads/{thread_id}")[0] == 200
        assert call(board["base"], f"/threads/{thread_id}")[0] == 200

    # then: the standby served them; the primary's entries were not read
    deadline = time.monotonic() + 10
    while entry_scans(board["standby"]) - on_standby < 30 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert entry_scans(board["standby"]) - on_standby >= 30
    assert entry_scans(board["primary"]) - on_primary == 0


def test_the_writer_reads_its_own_write_although_the_replica_is_behind(board):
    # given: a new question the delayed standby has not replayed yet
    replayed_a_recent_post(board)
    status, body = call(board["base"], "/api/v1/entries", token=board["token"],
                        body=question("own write"))
    assert status == 201
    entry = json.loads(body)

    # when: its writer lists the threads and opens it at once
    listed = listed_ids(board, token=board["token"])
    opened = call(board["base"], f"/api/v1/threads/{entry['id']}", token=board["token"])

    # then: it sees it (from the primary), while a stranger's list, from the standby,
    # does not have it yet
    assert entry["id"] in listed
    assert opened[0] == 200
    assert entry["id"] not in listed_ids(board)
    (on_standby,), = board["standby"].sql(
        "SELECT count(*) FROM board_entry WHERE id = %s", (entry["id"],)
    )
    assert on_standby == 0


def test_a_stranger_following_a_fresh_url_finds_the_entry(board):
    # given: a new question the delayed standby has not replayed yet
    replayed_a_recent_post(board)
    status, body = call(board["base"], "/api/v1/entries", token=board["token"],
                        body=question("fresh url"))
    assert status == 201
    entry = json.loads(body)
    path = entry["url"].split("://", 1)[1].split("/", 1)[1]

    # when: someone else (no token) follows its url and asks the API for it by id
    page = call(board["base"], "/" + path)
    by_id = call(board["base"], f"/api/v1/threads/{entry['id']}")

    # then: both find it: a miss on the replica asks the primary once before a 404;
    # the stranger's list still comes from the standby, without it
    assert page[0] == 200
    assert by_id[0] == 200
    assert json.loads(by_id[1])["id"] == entry["id"]
    assert entry["id"] not in listed_ids(board)


def test_a_hidden_entry_is_not_served_by_a_replica_that_has_not_replayed_the_hiding(board):
    # given: a question every database has, and so a stranger reads from the standby
    status, body = call(board["base"], "/api/v1/entries", token=board["token"],
                        body=question("hidden"))
    assert status == 201
    thread_id = json.loads(body)["id"]
    settled_on_standby(board)
    assert call(board["base"], f"/api/v1/threads/{thread_id}")[0] == 200

    # when: an operator hides it (the console's service), and a stranger reads at once
    manage(board["primary"].url(), "shell", "-c",
           f"from board import services; services.entry_set_visible(entry_id={thread_id},"
           " visible=False)",
           SETTLE_REPLICA_URLS=board["standby"].url(), SETTLE_CACHE_URL=CACHE_URL)
    seen = call(board["base"], f"/api/v1/threads/{thread_id}")

    # then: not served, although the standby still shows it as visible for a while
    assert seen[0] == 404
    (visible_on_standby,), = board["standby"].sql(
        "SELECT visible FROM board_entry WHERE id = %s", (thread_id,)
    )
    assert visible_on_standby is True
