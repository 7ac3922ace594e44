"""settle-agent: one JSON object per outcome, exit 0 settled, 3 unconfirmed, 4 refused, 2 usage."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from live import CUT_BY_THE_DEADLINE, entries_for, new_id

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = str(Path(sys.executable).parent / "settle-agent")


def run(*args: str, token: str | None = None, url: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("SETTLE_TOKEN", "SETTLE_URL")}
    if token:
        env["SETTLE_TOKEN"] = token
    if url:
        env["SETTLE_URL"] = url
    done = subprocess.run([AGENT, *args], env=env, capture_output=True, text=True, timeout=60)
    objects = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, objects, done.stderr


def question(journal, marker: str, *extra: str) -> list[str]:
    return ["--journal", str(journal), "post", "question", "--title", "From the shell?",
            "--body", f"identity {marker}", "--actor-name", "shell", "--actor-model", "m",
            *extra]


def test_post_question_prints_the_settled_entry_and_exits_0(proxy, token, journal):
    marker = new_id()

    status, [printed], _ = run(*question(journal, marker), token=token, url=proxy.url)

    assert status == 0
    assert printed["outcome"] == "settled"
    [entry] = entries_for(marker)
    assert printed["entry"]["id"] == entry.id
    assert entry.actor_model == "m"


def test_post_reply_takes_the_questions_id_and_the_url_option(proxy, token, journal):
    _, [asked], _ = run(*question(journal, new_id()), token=token, url=proxy.url)
    marker = new_id()

    status, [printed], _ = run(
        "--url", proxy.url, "--journal", str(journal), "post", "reply", "--parent-id",
        str(asked["entry"]["id"]), "--body", f"identity {marker}", "--actor-name", "shell",
        token=token)

    assert status == 0
    assert printed["entry"]["parent_id"] == asked["entry"]["id"]
    assert len(entries_for(marker)) == 1


def test_a_refusal_prints_its_code_and_exits_4(proxy, transactional_db, journal):
    status, [printed], _ = run(*question(journal, new_id()), token="settle_unknown",
                               url=proxy.url)

    assert status == 4
    assert (printed["outcome"], printed["code"]) == ("refused", "unauthorized")


def test_unconfirmed_exits_3_stays_pending_and_resume_settles_it(proxy, token, journal):
    from board.services import posting_pause, posting_resume

    posting_pause(reason="maintenance")
    marker = new_id()

    status, [printed], _ = run(*question(journal, marker, "--deadline", "2"), token=token,
                               url=proxy.url)
    _, waiting, _ = run("--journal", str(journal), "pending", "--json", token=token,
                        url=proxy.url)
    unconfirmed_resume, _, _ = run("--journal", str(journal), "resume", "--deadline", "1",
                                   token=token, url=proxy.url)
    posting_resume(reason="done")
    resumed, [settled], _ = run("--journal", str(journal), "resume", token=token,
                                url=proxy.url)

    assert (status, printed["outcome"]) == (3, "unconfirmed")
    assert printed["reason"] in {"writes_disabled"} | CUT_BY_THE_DEADLINE
    assert [w["request_id"] for w in waiting] == [printed["request_id"]]
    assert unconfirmed_resume == 3
    assert (resumed, settled["outcome"], settled["request_id"]) == (
        0, "settled", printed["request_id"])
    assert len(entries_for(marker)) == 1


@pytest.mark.parametrize("args", [
    ["--token", "x", "pending"],
    ["--token=x", "pending"],
    ["post", "question", "--title", "t", "--body", "b"],
])
def test_usage_errors_exit_2_and_send_nothing(proxy, transactional_db, journal, args):
    status, printed, stderr = run("--journal", str(journal), *args, url=proxy.url)

    assert status == 2
    assert printed == []
    assert proxy.seen.writes == 0


@pytest.mark.parametrize("deadline", ["-5", "0", "nan", "inf", "soon"])
@pytest.mark.parametrize("command", ["post", "resume"])
def test_a_deadline_that_is_no_positive_number_of_seconds_is_a_usage_error(
    proxy, transactional_db, journal, command, deadline
):
    args = question(journal, new_id()) if command == "post" else ["--journal", str(journal),
                                                                  "resume"]
    status, printed, stderr = run(*args, f"--deadline={deadline}", url=proxy.url)

    assert status == 2
    assert printed == [] and stderr.count("\n") == 1
    assert proxy.seen.writes == 0
    assert run("--journal", str(journal), "pending", "--json", url=proxy.url)[1] == []


def test_pending_with_nothing_pending_says_so_in_one_line_and_json_prints_nothing(
    proxy, journal
):
    said = subprocess.run([AGENT, "--url", proxy.url, "--journal", str(journal), "pending"],
                          capture_output=True, text=True, timeout=60)
    as_json = subprocess.run([AGENT, "--url", proxy.url, "--journal", str(journal), "pending",
                              "--json"], capture_output=True, text=True, timeout=60)

    assert (said.returncode, said.stdout) == (0, f"no pending intents for {proxy.url}\n")
    assert (as_json.returncode, as_json.stdout) == (0, "")


def test_without_a_url_it_is_a_usage_error(transactional_db, journal):
    status, _, stderr = run("--journal", str(journal), "pending")

    assert status == 2
    assert "SETTLE_URL" in stderr


def test_a_journal_that_cannot_be_opened_is_a_usage_error_and_sends_nothing(
    proxy, transactional_db, tmp_path
):
    taken = tmp_path / "a-file"
    taken.write_text("")  # a file where the journal's folder would be

    status, printed, stderr = run(
        "--journal", str(taken / "journal.sqlite3"),
        "post", "question", "--title", "t", "--body", "b", "--actor-name", "n", url=proxy.url,
    )

    assert status == 2
    assert printed == []
    assert "journal cannot be opened" in stderr
    assert "Traceback" not in stderr
    assert proxy.seen.writes == 0


def test_a_refusal_prints_the_servers_message_and_the_error_objects_other_fields(
    proxy, token, journal
):
    status, [printed], _ = run(
        "--url", proxy.url, "--journal", str(journal), "post", "reply", "--parent-id",
        "987654321", "--body", f"identity {new_id()}", "--actor-name", "shell", token=token)

    server_said = json.loads(proxy.seen.answers[-1].split(b"\r\n\r\n", 1)[1])["error"]
    assert status == 4
    assert (printed["outcome"], printed["code"], printed["status"]) == (
        "refused", "parent_unavailable", 422)
    assert printed["message"] == server_said["message"]
    assert "question" in printed["message"]  # it says why, not only the code
    assert printed["details"] == {k: v for k, v in server_said.items() if k != "code"}
