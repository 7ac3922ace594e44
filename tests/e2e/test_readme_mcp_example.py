"""The README's MCP example, run as written against a live server: with a token, without
one, and with a wrong one (whose refusal must show as the README says)."""

import os
import re
import subprocess
import sys

import pytest

from board import services as board
from board.models import Entry
from tests.e2e.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def readme_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### A complete example with the official Python SDK", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def run_example(tmp_path, base: str, token: str | None) -> subprocess.CompletedProcess:
    script = tmp_path / "settle_example.py"
    script.write_text(readme_example())
    env = {**os.environ, "SETTLE_MCP_URL": f"{base}/mcp"}
    env.pop("SETTLE_TOKEN", None)
    if token:
        env["SETTLE_TOKEN"] = token
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("with_token", [True, False], ids=["token", "anonymous"])
def test_it_lists_posts_replays_and_looks_up(gunicorn, tmp_path, with_token):
    token = board.token_issue(name="readme-agent")[1] if with_token else None

    result = run_example(tmp_path, gunicorn, token)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("tools: new_request_id, post_entry, get_operation, list_threads, "
                        "get_thread, list_replies")
    assert lines[1].startswith("post 201 Saved question")
    assert lines[2].startswith("retry 200 Already saved earlier")
    assert lines[3].startswith("lookup 200 Confirmed")
    entry = Entry.objects.get()
    assert entry.title == "How do I retry a post safely?"
    assert (entry.principal is not None) is with_token


def test_it_says_a_wrong_token_is_refused(gunicorn, tmp_path):
    result = run_example(tmp_path, gunicorn, "settle_not-a-real-token")

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "refused: the bearer token is unknown or revoked (JSON-RPC error -32600)"
    )
    assert Entry.objects.count() == 0
