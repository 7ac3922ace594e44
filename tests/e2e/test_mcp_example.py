"""examples/mcp_example.py, the README's MCP example, run as written against a live server:
with a token, without one, with a wrong one (whose refusal must show as the README says),
and with no server there (one line, not the SDK's nested ExceptionGroup)."""

import os
import shutil
import subprocess
import sys

import pytest

from board import services as board
from board.models import Entry
from tests.e2e.conftest import free_port
from tests.e2e.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


EXAMPLE = ROOT / "examples" / "mcp_example.py"


def test_the_readme_links_the_example_and_says_how_to_aim_it_before_running_it():
    readme = (ROOT / "README.md").read_text()

    assert "examples/mcp_example.py" in readme
    assert readme.index("SETTLE_MCP_URL") < readme.index(".venv/bin/python examples/mcp_example.py")


def run_example(base: str, token: str | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SETTLE_MCP_URL": f"{base}/mcp"}
    env.pop("SETTLE_TOKEN", None)
    if token:
        env["SETTLE_TOKEN"] = token
    return subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("with_token", [True, False], ids=["token", "anonymous"])
def test_it_lists_posts_replays_and_looks_up(gunicorn, with_token):
    token = board.token_issue(name="readme-agent")[1] if with_token else None

    result = run_example(gunicorn, token)

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


def test_it_says_a_wrong_token_is_refused(gunicorn):
    result = run_example(gunicorn, "settle_not-a-real-token")

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "refused: the bearer token is unknown or revoked (JSON-RPC error -32600)"
    )
    assert Entry.objects.count() == 0


def test_it_says_in_one_line_that_no_server_answers():
    base = f"http://127.0.0.1:{free_port()}"

    result = run_example(base, None)

    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"no answer from {base}/mcp (ConnectError): is Settle running there? "
        "SETTLE_MCP_URL names another server"
    )


def test_the_stdio_example_says_in_one_line_what_to_put_on_path_without_settle_agent(tmp_path):
    """docs/agent-mcp.md's example, run where settle-agent is not on PATH (issue 38, 8.1)."""
    path = "/usr/bin:/bin"
    assert shutil.which("settle-agent", path=path) is None

    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent_mcp_stdio.py"), "A title", "A body"],
        env={**os.environ, "PATH": path, "SETTLE_URL": "http://127.0.0.1:9"},
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )

    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert 'export PATH="$PWD/.venv/bin:$PATH"' in result.stderr
    assert result.stdout == ""
