"""An answer is read up to 8 MiB and within its attempt's timeout (SPEC 13): past either it
is no usable answer, not final, and settling goes on within the one deadline.

Against a hostile board (hostile.py), the client runs in a process of its own, so its peak
resident memory (VmHWM, which a new program starts afresh) is its own; against a live
Settle, one flooded answer is followed by the replay that settles the write.
"""

import json
import subprocess
import sys
import time

import pytest
from hostile import HostileBoard
from live import CUT_BY_THE_DEADLINE, TIMINGS, client_for, entries_for, new_id
from settle_client import Settled

# Two attempts fit in the deadline whatever the backoff draws (at most 0.5 s after the
# first failure), so "tried again" is proven as surely as with a longer one.
DEADLINE, ATTEMPT_TIMEOUT = 3.0, 1.5
SLACK = 1.5  # a loaded machine's scheduling, not a read the client let run on
# What the client may grow by while settling: the 8 MiB answer, a copy of it and the
# allocator's keep. Unbounded, a flood grows it by hundreds of MiB in these seconds.
MOST_GROWTH_MIB = 96

CLIENT = r"""
import json, sys, time
from settle_client import Client, Unconfirmed

def peak_mib():
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024

url, journal, transport, deadline, attempt = sys.argv[1:6]
client = Client(url, journal=journal, transport=transport, deadline=float(deadline),
                attempt_timeout=float(attempt))
before = peak_mib()
began = time.monotonic()
try:
    client.post_question("Hostile?", "a body", actor={"name": "hostile-test"})
    outcome = {"outcome": "settled"}
except Unconfirmed as pending:
    outcome = pending.as_json()
outcome.update(took=time.monotonic() - began, grew_mib=peak_mib() - before)
print(json.dumps(outcome))
"""


def settle_in_a_process(url: str, journal, transport: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, url, str(journal), transport, str(DEADLINE),
         str(ATTEMPT_TIMEOUT)],
        capture_output=True, text=True, timeout=DEADLINE + 60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("behaviour, status, reasons", [
    ("flood", 201, {"AnswerTooLarge"}),    # endless, no length
    ("flood", 422, {"AnswerTooLarge"}),    # a refusal too large to read is no refusal
    ("gib", 201, {"AnswerTooLarge"}),      # 1 GiB, its length announced
    ("bomb", 201, {"AnswerTooLarge", "AnswerEncoded"}),  # 256 KiB gzipped, 256 MiB unzipped
    ("trickle", 201, set()),               # a byte every 50 ms for ever: the timeout ends it
])
def test_a_hostile_answer_is_unconfirmed_within_the_deadline_in_bounded_memory(
    transport, journal, behaviour, status, reasons
):
    board = HostileBoard(behaviour, status)
    try:
        outcome = settle_in_a_process(board.url, journal, transport)
    finally:
        board.close()

    assert outcome["outcome"] == "unconfirmed", outcome
    assert outcome["reason"] in reasons | CUT_BY_THE_DEADLINE, outcome
    assert outcome["took"] < DEADLINE + SLACK, outcome
    assert outcome["grew_mib"] < MOST_GROWTH_MIB, outcome
    assert board.requests >= 2  # an unusable answer is not final: it was tried again


@pytest.mark.django_db(transaction=True)
def test_a_flooded_answer_is_tried_again_and_the_replay_settles_it(
    proxy, token, journal, transport
):
    proxy.reset(["flood"])
    request_id = new_id()

    began = time.monotonic()
    settled = client_for(proxy, token, journal, transport).post_question(
        "Flooded?", f"identity {request_id}", actor={"name": "flood"}, request_id=request_id)

    assert isinstance(settled, Settled)
    assert settled.how == "replayed"
    assert proxy.seen.writes == 2
    assert proxy.seen.flooded > 8 * 1024 * 1024
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id
    assert time.monotonic() - began < TIMINGS[transport]["deadline"] + SLACK
