"""Answers a server can send that the client must survive (SPEC 13): a wait that is no
finite number of seconds from 0 to 86,400 is absent (the backoff applies), no wait is
shorter than 0.1 s, nothing makes the client raise anything but its outcomes, and
settle-agent mcp answers every tool call with a result in SPEC 13.1's shape, its text
JSON. The board is hostile.py's, answering every request the same."""

import json
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest
from hostile import HostileBoard
from hosts import official
from live import CUT_BY_THE_DEADLINE
from settle_client import Client, Unconfirmed

DEADLINE = 2.0
SLACK = 1.5
# One write a SHORTEST_WAIT at most, and the first: 2 s of Retry-After: 0 is 21 writes,
# where it was hundreds.
MOST_WRITES = int(DEADLINE / 0.1) + 1
DIGITS_401 = "1" * 401


def rate_limited(retry_after_seconds: str) -> bytes:
    """A 429 body carrying retry_after_seconds as written (NaN is what Python's parser
    would take, though it is not JSON)."""
    return (b'{"error": {"code": "rate_limited", "message": "slow down", '
            b'"retry_after_seconds": ' + retry_after_seconds.encode() + b"}}")


PLAIN_429 = rate_limited("null")
WAITS = {
    "retry_after_seconds of 401 digits": ({}, rate_limited(DIGITS_401)),
    "retry_after_seconds NaN": ({}, rate_limited("NaN")),
    "retry_after_seconds -5": ({}, rate_limited("-5")),
    "retry_after_seconds a string": ({}, rate_limited('"5"')),
    "Retry-After: 0": ({"Retry-After": "0"}, PLAIN_429),
    "Retry-After: inf": ({"Retry-After": "inf"}, PLAIN_429),
    "Retry-After: -5": ({"Retry-After": "-5"}, PLAIN_429),
    "Retry-After: 401 digits": ({"Retry-After": DIGITS_401}, PLAIN_429),
    # HTTP's delay-seconds is digits alone (RFC 9110): what float() would also take is no wait
    "Retry-After: 1e3": ({"Retry-After": "1e3"}, PLAIN_429),
    "Retry-After: 1_000": ({"Retry-After": "1_000"}, PLAIN_429),
    "Retry-After: 1.5": ({"Retry-After": "1.5"}, PLAIN_429),
}


def strict_json(text: str) -> object:
    """The text as JSON, refusing the NaN and Infinity Python's parser would take."""
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in a tool result's text")

    return json.loads(text, parse_constant=refuse)


def reason_for(case: str) -> str:
    # NaN is not JSON: such a body is none the client reads, so the 429 has no code.
    return "http_429" if "NaN" in case else "rate_limited"


def run(scenario, *args):
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(anyio.run, scenario, *args).result()


@pytest.fixture
def board():
    boards = []

    def serve(*args, **kwargs) -> HostileBoard:
        boards.append(HostileBoard("answer", *args, **kwargs))
        return boards[-1]

    yield serve
    for each in boards:
        each.close()


@pytest.mark.parametrize("case", sorted(WAITS))
def test_a_wait_that_is_no_number_of_seconds_is_absent_and_no_wait_is_under_a_tenth(
    board, journal, case
):
    headers, body = WAITS[case]
    hostile = board(429, headers=headers, body=body)
    client = Client(hostile.url, journal=journal, deadline=DEADLINE, attempt_timeout=1.0)

    began = time.monotonic()
    with pytest.raises(Unconfirmed) as pending:
        client.post_question("Waiting?", "a body", actor={"name": "hostile-test"})
    took = time.monotonic() - began

    print(f"{case}: {hostile.writes} writes, {hostile.requests} requests in {took:.2f} s")
    if pending.value.reason not in CUT_BY_THE_DEADLINE:
        assert pending.value.reason == reason_for(case)
        assert pending.value.retry_after == (0.0 if case == "Retry-After: 0" else None)
    assert 1 < hostile.writes <= MOST_WRITES
    assert took < DEADLINE + SLACK
    assert [i.request_id for i in client.pending()] == [pending.value.request_id]


@pytest.mark.parametrize("case", ["retry_after_seconds of 401 digits", "Retry-After: inf",
                                  "retry_after_seconds NaN"])
def test_settle_agent_answers_a_post_met_by_a_hostile_wait_with_json_in_its_shape(
    board, journal, case
):
    headers, body = WAITS[case]
    hostile = board(429, headers=headers, body=body)

    async def scenario():
        async with official(hostile.url, None, journal, "--deadline", str(DEADLINE)) as mcp:
            return await mcp.call("post_question", {"title": "Waiting?", "body": "a body"})

    posted = run(scenario)

    assert strict_json(posted.text) == posted.content
    assert (posted["outcome"], posted["retry_after"]) == ("unconfirmed", None)
    assert posted["reason"] in {reason_for(case)} | CUT_BY_THE_DEADLINE
    assert posted.is_error is True
    assert hostile.writes <= MOST_WRITES


def test_a_read_answered_900_levels_deep_is_a_result_saying_so(board, journal):
    hostile = board(200, body=b'{"a": ' * 900 + b"1" + b"}" * 900)

    async def scenario():
        async with official(hostile.url, None, journal) as mcp:
            return await mcp.call("get_thread", {"id": 1})

    read = run(scenario)

    assert strict_json(read.text) == read.content
    assert (read["http_status"], read.is_error) == (200, True)
    assert read["data"]["error"]["code"] == "unreadable_answer"
    assert read["data"]["error"]["message"]


def test_a_cursor_too_long_for_any_url_is_answered_as_wrong_arguments(board, journal):
    hostile = board(200, body=b'{"items": [], "next_cursor": null}')

    async def scenario():
        async with official(hostile.url, None, journal) as mcp:
            return await mcp.call("list_threads", {"cursor": "c" * 100_000})

    read = run(scenario)

    assert strict_json(read.text) == read.content
    assert (read["http_status"], read.is_error) == (None, True)
    assert read["data"]["error"]["code"] == "invalid_arguments"
    assert "cursor" in read["data"]["error"]["message"]
    assert hostile.requests == 0  # Settle was not asked


@pytest.mark.parametrize("written", ['"1e3"', '"1_000"', '"5"', "-1", "86401", "true"])
def test_over_mcp_a_retry_after_seconds_that_is_no_json_number_of_seconds_is_absent(
    journal, written
):
    # given: an /mcp answering each post with a 429 whose wait is no number of seconds
    data = {"error": {"code": "rate_limited", "message": "slow down",
                      "retry_after_seconds": None}}
    hostile = HostileBoard("mcp", 200, body=(
        '{"http_status": 429, "data": ' + json.dumps(data)
        + ', "retry_after_seconds": ' + written + "}").encode())
    client = Client(hostile.url, journal=journal, transport="mcp", deadline=DEADLINE,
                    attempt_timeout=1.0)

    # when
    try:
        with pytest.raises(Unconfirmed) as pending:
            client.post_question("Waiting?", "a body", actor={"name": "hostile-test"})
    finally:
        hostile.close()

    # then: tried again on the backoff, the wait absent
    if pending.value.reason not in CUT_BY_THE_DEADLINE:
        assert (pending.value.reason, pending.value.retry_after) == ("rate_limited", None)
    assert 1 < hostile.writes <= MOST_WRITES
