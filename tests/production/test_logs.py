"""Logs (SPEC 11.4, 12): one JSON line per request and per job, with the fields operators
filter on, and none of what the callers sent."""

import http.cookiejar
import json
import re
import urllib.parse
import urllib.request
import uuid

import pytest

from board.celery import app
from maintenance.models import MaintenanceRun
from tests.board.mcp_support import META, MODERN
from tests.celery_worker import celery_worker, wait_for
from tests.conftest import issue_agent, question
from tests.production.conftest import call

# Every marker is a string nothing but the request itself could put in a log.
MARK = uuid.uuid4().hex[:10]
MARKERS = {
    "title": f"title-{MARK}",
    "body": f"body-{MARK}",
    "actor": f"actor-{MARK}",
    "query": f"query-{MARK}",
    "bad_body": f"badbody-{MARK}",
    "bad_token": f"badtoken-{MARK}",
    "mcp_title": f"mcptitle-{MARK}",
    "password": f"password-{MARK}",
    "wrong_password": f"wrongpassword-{MARK}",
}


def marked_question(**overrides) -> dict:
    return question(**{
        "title": MARKERS["title"], "body": MARKERS["body"],
        "actor": {"name": MARKERS["actor"], "model": "m", "trigger": "t"}, **overrides,
    })


def console_login(base: str, password: str) -> int:
    """Log in through the console's form as a browser would; returns the POST's status."""
    jar = http.cookiejar.CookieJar()

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    page = opener.open(f"{base}/console/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    form = urllib.parse.urlencode({
        "csrfmiddlewaretoken": token, "username": "operator", "password": password,
    }).encode()
    try:
        return opener.open(f"{base}/console/login/", data=form, timeout=30).status
    except urllib.error.HTTPError as error:
        return error.code


def mcp_post(base: str, arguments: dict, token: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "post_entry", "arguments": arguments, "_meta": META}}
    status, _, _ = call(base, "/mcp", method="POST", body=body, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "post_entry",
    })
    return status


@pytest.mark.django_db(transaction=True)
def test_a_whole_session_logs_its_fields_and_none_of_its_markers(serve, django_user_model):
    django_user_model.objects.create_superuser("operator", "", MARKERS["password"])
    agent = issue_agent("log-agent")
    served = serve(WEB_CONCURRENCY="2")
    auth = {"Authorization": f"Bearer {agent.token}"}
    first = marked_question()

    # when: a session with every kind of call
    statuses = {
        "created": call(served.base, "/api/v1/entries", method="POST", body=first,
                        headers=auth)[0],
        "replayed": call(served.base, "/api/v1/entries", method="POST", body=first,
                         headers=auth)[0],
        "conflict": call(served.base, "/api/v1/entries", method="POST",
                         body={**first, "body": f"other-{MARKERS['body']}"}, headers=auth)[0],
        "bad_body": call(served.base, "/api/v1/entries", method="POST",
                         body=f'{{"title": "{MARKERS["bad_body"]}"'.encode(), headers=auth)[0],
        "bad_token": call(served.base, "/api/v1/entries", method="POST",
                          body=marked_question(),
                          headers={"Authorization": f"Bearer {MARKERS['bad_token']}"})[0],
        "query": call(served.base, f"/api/v1/threads?cursor={MARKERS['query']}")[0],
        "page": call(served.base, f"/threads/?q={MARKERS['query']}")[0],
        "mcp": mcp_post(served.base, marked_question(title=MARKERS["mcp_title"]), agent.token),
        "wrong_login": console_login(served.base, MARKERS["wrong_password"]),
        "login": console_login(served.base, MARKERS["password"]),
    }
    served.stop()  # flushes both streams

    # then: the session happened as scripted
    assert statuses == {
        "created": 201, "replayed": 200, "conflict": 409, "bad_body": 400, "bad_token": 401,
        "query": 400, "page": 200, "mcp": 200, "wrong_login": 200, "login": 302,
    }
    text = served.text()
    lines = served.lines()  # every line is JSON
    for name, marker in {**MARKERS, "token": agent.token}.items():
        assert marker not in text, f"the {name} marker reached the logs"
    assert "?" not in " ".join(str(line.get("path", "")) for line in lines)

    # (the start-up probe of /healthz aside)
    requests = [line for line in lines
                if line["logger"] == "settle.request" and line["path"] != "/healthz"]
    access = [line for line in lines
              if line["logger"] == "gunicorn.access" and line["path"] != "/healthz"]
    # one request line and one access line per request (the logins' GETs included)
    assert len(requests) == len(access) == len(statuses) + 2
    for line in requests:
        assert {"time", "level", "method", "path", "route", "status", "duration_ms"} <= set(line)
    for line in access:
        assert set(line) == {"time", "level", "logger", "message", "method", "path", "status",
                             "duration_ms"}
    posts = [(line["route"], line["status"], line.get("outcome"), line.get("request_id"))
             for line in requests if line["path"] in ("/api/v1/entries", "/mcp")]
    assert posts == [
        ("api", 201, "created", first["request_id"]),
        ("api", 200, "replayed", first["request_id"]),
        ("api", 409, "conflict", first["request_id"]),
        ("api", 400, "invalid", None),
        ("api", 401, "unauthorized", posts[4][3]),
        ("mcp", 200, "created", posts[5][3]),
    ]
    assert {(line["route"], line["status"]) for line in requests
            if line["path"] == "/console/login/" and line["method"] == "POST"} == {
        ("console", 200), ("console", 302)}


@pytest.mark.django_db(transaction=True)
def test_a_celery_job_logs_one_json_line(tmp_path):
    task_id = str(uuid.uuid4())  # the broker may hold other tests' tasks: find ours

    with celery_worker(tmp_path, beat=False) as log:
        app.send_task("maintenance.purge_attempts", task_id=task_id)
        ran = wait_for(lambda: MaintenanceRun.objects.filter(job="purge-attempts").exists())
        lines = wait_for(lambda: [
            json.loads(text) for text in log.read_text().splitlines()
            if task_id in text
        ], seconds=20)

    assert ran, log.read_text()[-3000:]
    assert lines and len(lines) == 1, log.read_text()[-3000:]
    job = lines[0]
    assert job["logger"] == "settle.job"
    assert job["job"] == "maintenance.purge_attempts"
    assert job["outcome"] == "succeeded"
    assert job["duration_ms"] >= 0
    assert "args" not in job and "result" not in job
