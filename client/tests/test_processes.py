"""Threads and processes: a SIGKILLed client resumed elsewhere, resumes racing on one journal."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from live import client_for, entries_for, new_id
from settle_client import Client, Settled, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = str(Path(sys.executable).parent / "settle-agent")


def agent(proxy, token, journal, *args: str) -> subprocess.Popen:
    env = {**os.environ, "SETTLE_TOKEN": token, "SETTLE_URL": proxy.url}
    return subprocess.Popen([AGENT, "--journal", str(journal), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def lines(process: subprocess.Popen) -> list[dict]:
    out, _ = process.communicate(timeout=60)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_a_client_killed_after_its_request_left_is_settled_by_resume_in_a_new_process(
    proxy, token, journal
):
    proxy.hold_seconds = 30
    proxy.reset(["hold"])
    marker = new_id()
    posting = agent(proxy, token, journal, "post", "question", "--title", "Killed?",
                    "--body", f"identity {marker}", "--actor-name", "killed")
    assert proxy.seen.forwarded.wait(20)
    os.kill(posting.pid, signal.SIGKILL)
    posting.wait()

    [waiting] = lines(agent(proxy, token, journal, "pending", "--json"))
    resuming = agent(proxy, token, journal, "resume", "--deadline", "5")
    [outcome] = lines(resuming)

    assert resuming.returncode == 0
    assert outcome["outcome"] == "settled"
    assert outcome["request_id"] == waiting["request_id"]
    [entry] = entries_for(marker)
    assert outcome["entry"]["id"] == entry.id
    assert lines(agent(proxy, token, journal, "pending", "--json")) == []


def test_two_processes_resuming_one_journal_make_one_entry_per_intent(proxy, token, journal):
    client = Client(proxy.url, token=token, journal=journal, deadline=0.4,
                    attempt_timeout=0.3)
    proxy.reset(["drop", "reset"] * 50)
    markers = [new_id() for _ in range(6)]
    for marker in markers:
        with pytest.raises(Unconfirmed):
            client.post_question("Raced?", f"identity {marker}", actor={"name": "race"})
    proxy.reset()
    waiting = {p.request_id for p in client.pending()}

    both = [agent(proxy, token, journal, "resume", "--deadline", "10") for _ in range(2)]
    outcomes = [outcome for process in both for outcome in lines(process)]

    assert len(waiting) == len(markers)
    assert sorted(o["request_id"] for o in outcomes) == sorted(waiting)  # each once
    assert all(o["outcome"] == "settled" for o in outcomes)
    assert [len(entries_for(marker)) for marker in markers] == [1] * 6
    assert client.pending() == []


def test_eight_threads_share_one_client_and_each_intent_makes_one_entry(
    proxy, token, journal, transport
):
    client = client_for(proxy, token, journal, transport, deadline=10.0)
    proxy.reset(["drop", "reset", "pass"] * 4)
    markers = [new_id() for _ in range(8)]
    results: dict[str, object] = {}

    def post(marker: str) -> None:
        results[marker] = client.post_question("Threaded?", f"identity {marker}",
                                               actor={"name": "threads"})

    threads = [threading.Thread(target=post, args=(m,)) for m in markers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert all(isinstance(results[m], Settled) for m in markers)
    for marker in markers:
        [entry] = entries_for(marker)
        assert results[marker].entry["id"] == entry.id
    assert client.pending() == []
