"""No input a client sends alone costs more than its size allows (SPEC 11.6): every kind
SPEC 11.6 names (text, JSON depth, a cursor, a duration, a URL) at the largest size the
contract lets through, refused as the contract says and answered within a second.

Each timed call follows one untimed call on the same route, so what is measured is the
input's cost and not a process's first request (imports, URL resolution)."""

import base64
import gc
import json
import time
import unicodedata
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from hypothesis import given
from hypothesis import strategies as st

from board.entries.cursors import CURSOR_MAX_LENGTH, encode_cursor
from board.entries.fields import ENTRY_ID_MAX
from board.entries.stream_safe import MAX_NON_STARTERS, is_stream_safe
from board.models import RetentionPolicy
from board.serving.environment import parse_duration
from maintenance.deliveries.models import URL_LIMIT, Endpoint
from moderation.access.capabilities import ADMINISTRATORS
from moderation.models import AuditEvent
from tests.board.mcp_support import META, modern_call, modern_headers, rpc
from tests.conftest import counts, question
from tests.moderation.conftest import logged_in, staff_user

pytestmark = pytest.mark.django_db

ACUTE, GRAVE_BELOW = "\u0301", "\u0316"  # combining classes 230 and 220: NFC reorders them
NOTHING_WRITTEN = {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}
STREAM_UNSAFE = "Stream-Safe"


class Timed:
    """A call's result and how long it took."""

    def __init__(self, call):
        started = time.monotonic()
        self.result = call()
        self.seconds = time.monotonic() - started


def within_a_second(call):
    timed = Timed(call)
    assert timed.seconds < 1.0, f"took {timed.seconds:.2f} s"
    return timed.result


def marks(count: int) -> str:
    """`count` combining marks of alternating classes: the order NFC must sort."""
    return (ACUTE + GRAVE_BELOW) * (count // 2) + ACUTE * (count % 2)


def utf8_body(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode()


def padded_to_the_cap(make, room: int = 64) -> bytes:
    """The largest body `make(n)` gives under SPEC 5's 256 KiB cap (a body over it is a
    400 before any field is read): `n` grown by halves, `room` bytes left for an MCP
    envelope or a header's worth of slack."""
    cap = settings.SETTLE_MAX_BODY_BYTES - room
    low, high = 0, cap
    while low < high:
        middle = (low + high + 1) // 2
        if len(make(middle)) <= cap:
            low = middle
        else:
            high = middle - 1
    body = make(low)
    assert cap - 8 <= len(body) <= cap
    return body


def mcp_post(client, payload_bytes: bytes, **headers):
    """A post_entry tools/call whose arguments are the given JSON object's bytes."""
    envelope = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "post_entry", "arguments": "@", "_meta": META},
    }).encode().replace(b'"@"', payload_bytes)
    return rpc(client, envelope, **modern_headers("tools/call", "post_entry"), **headers)


def mcp_structured(response) -> dict:
    assert response.status_code == 200, response.content
    return response.json()["result"]["structuredContent"]


def refused_fields(error: dict) -> dict[str, str]:
    return {problem["field"]: problem["problem"] for problem in error.get("fields", [])}


def warm_up(anonymous) -> None:
    anonymous.post(question(body=""))
    modern_call(anonymous.client, "post_entry", question(body=""))
    anonymous.get("/api/v1/threads")


# --- Text: Unicode's Stream-Safe Text Format (UAX #15), before NFC ----------------------

TEXT_FIELDS = ["title", "body", "actor.name", "actor.model", "actor.trigger"]


def with_field(field: str, text: str) -> dict:
    payload = question()
    if field.startswith("actor."):
        payload["actor"] = {**payload["actor"], field.split(".")[1]: text}
    else:
        payload[field] = text
    return payload


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_it_refuses_31_non_starters_in_a_row_naming_the_field_over_http(anonymous, field):
    response = anonymous.post(with_field(field, "a" + marks(MAX_NON_STARTERS + 1)))

    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert STREAM_UNSAFE in refused_fields(error)[field]
    assert counts() == NOTHING_WRITTEN


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_it_refuses_31_non_starters_in_a_row_naming_the_field_over_mcp(anonymous, field):
    structured = mcp_structured(
        modern_call(anonymous.client, "post_entry", with_field(field, "a" + marks(31)))
    )

    assert structured["http_status"] == 422
    assert structured["data"]["error"]["code"] == "invalid_request"
    assert STREAM_UNSAFE in refused_fields(structured["data"]["error"])[field]
    assert counts() == NOTHING_WRITTEN


@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_it_takes_30_non_starters_in_a_row(anonymous, field, roomy_limits):
    # Runs of 30 between letters, as often as the field's limit allows.
    response = anonymous.post(with_field(field, ("a" + marks(30)) * 2))

    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    "text, safe",
    [
        # U+0344 decomposes into two non-starters: 16 of them are 32 in NFKD.
        pytest.param("a" + "\u0344" * 15, True, id="15-decomposing-to-30"),
        pytest.param("a" + "\u0344" * 16, False, id="16-decomposing-to-32"),
        # U+00A8 (diaeresis) is a space and a combining mark in NFKD: its mark starts the run.
        pytest.param("\u00a8" + ACUTE * 29, True, id="trailing-non-starter-and-29"),
        pytest.param("\u00a8" + ACUTE * 30, False, id="trailing-non-starter-and-30"),
        # U+FF9E (halfwidth voiced sound mark) is a starter whose NFKD is a non-starter.
        pytest.param("a" + "\uff9e" * 31, False, id="compatibility-non-starters"),
        # A letter breaks the run; so does a Hangul syllable (its jamo are starters).
        pytest.param(marks(30) + "b" + marks(30), True, id="broken-by-a-letter"),
        pytest.param(marks(30) + "\uac00" + marks(30), True, id="broken-by-hangul"),
        pytest.param(marks(30) + "\n" + marks(30), True, id="broken-by-a-line-break"),
        pytest.param(ACUTE * 31, False, id="marks-alone"),
    ],
)
def test_it_counts_non_starters_as_uax_15_does(text, safe):
    assert is_stream_safe(text) is safe


INTERESTING = st.sampled_from(
    ["a", " ", "\n", "\u00a8", "\u00e9", "\u0344", "\u0f73", "\u1e09", "\uac00", "\uff9e",
     "\u1100", "\u1161", ACUTE, GRAVE_BELOW, "\u0345", "\u05b0", "\u3099", "\U0001d15e"]
)


@given(st.lists(st.tuples(INTERESTING, st.integers(1, 20)), max_size=12))
def test_it_agrees_with_the_longest_run_in_nfkd(pieces):
    text = "".join(char * times for char, times in pieces)
    longest = run = 0
    for char in unicodedata.normalize("NFKD", text):
        run = run + 1 if unicodedata.combining(char) else 0
        longest = max(longest, run)

    assert is_stream_safe(text) is (longest <= MAX_NON_STARTERS)


def largest_unsafe_post() -> bytes:
    """A title of one letter and combining marks filling a body up to the cap."""
    return padded_to_the_cap(lambda n: utf8_body(question(title="a" + marks(n))), room=512)


def test_a_body_of_combining_marks_at_the_cap_is_refused_within_a_second_over_http(anonymous):
    body = largest_unsafe_post()
    warm_up(anonymous)

    response = within_a_second(lambda: anonymous.post_raw(body))

    assert response.status_code == 422
    assert STREAM_UNSAFE in refused_fields(response.json()["error"])["title"]
    assert counts() == NOTHING_WRITTEN


def test_a_body_of_combining_marks_at_the_cap_is_refused_within_a_second_over_mcp(anonymous):
    payload = largest_unsafe_post()
    warm_up(anonymous)

    response = within_a_second(lambda: mcp_post(anonymous.client, payload))

    structured = mcp_structured(response)
    assert structured["http_status"] == 422
    assert STREAM_UNSAFE in refused_fields(structured["data"]["error"])["title"]
    assert counts() == NOTHING_WRITTEN


def test_a_wrong_token_is_still_answered_first_and_within_a_second(anonymous):
    body = largest_unsafe_post()
    warm_up(anonymous)

    response = within_a_second(
        lambda: anonymous.post_raw(body, HTTP_AUTHORIZATION="Bearer not-a-token")
    )

    assert response.status_code == 401
    assert counts() == NOTHING_WRITTEN


def test_a_foreign_origin_is_still_answered_first_and_within_a_second(anonymous):
    body = largest_unsafe_post()
    warm_up(anonymous)

    response = within_a_second(
        lambda: anonymous.post_raw(body, HTTP_ORIGIN="https://elsewhere.example")
    )

    assert response.status_code == 403
    assert counts() == NOTHING_WRITTEN


def test_stream_safe_text_at_the_cap_is_normalized_and_refused_as_too_long_within_a_second(
    anonymous,
):
    # Runs of exactly 30 marks: allowed in shape, so NFC runs on the whole body.
    body = padded_to_the_cap(
        lambda n: utf8_body(question(body=("a" + marks(30)) * n)), room=512
    )
    warm_up(anonymous)

    response = within_a_second(lambda: anonymous.post_raw(body))

    assert response.status_code == 422
    assert "at most 10000 characters" in refused_fields(response.json()["error"])["body"]


def test_a_body_of_distinct_decomposing_characters_at_the_cap_is_read_within_a_second(
    anonymous,
):
    # Every character with a decomposition, repeated: the check's slowest text per byte.
    decomposing = "".join(
        chr(code) for code in range(0xA0, 0x30000)
        if unicodedata.decomposition(chr(code)) and not 0xAC00 <= code <= 0xD7A3
    )
    body = padded_to_the_cap(
        lambda n: utf8_body(question(body=(decomposing * (n // len(decomposing) + 1))[:n])),
        room=512,
    )
    warm_up(anonymous)

    response = within_a_second(lambda: anonymous.post_raw(body))

    assert response.status_code == 422


# --- JSON depth ------------------------------------------------------------------------

def nested_payload(depth: int) -> bytes:
    """A post whose object holds arrays nested so that the body is `depth` levels deep
    (the body's own object is the first level)."""
    inner = "[" * (depth - 1) + "]" * (depth - 1)
    return json.dumps(question()).replace('"body"', f'"deep": {inner}, "body"', 1).encode()


def test_a_body_nested_to_the_limit_is_read_and_one_level_more_is_refused(anonymous):
    at_limit = anonymous.post_raw(nested_payload(settings.SETTLE_MAX_JSON_DEPTH))
    past_limit = anonymous.post_raw(nested_payload(settings.SETTLE_MAX_JSON_DEPTH + 1))

    assert at_limit.status_code == 422  # read: its only problem is the unknown field
    assert refused_fields(at_limit.json()["error"]) == {"deep": "unknown field"}
    assert past_limit.status_code == 400
    assert "nested deeper than 32 levels" in past_limit.json()["error"]["message"]


@pytest.mark.parametrize("closed", [True, False], ids=["closed", "unclosed"])
def test_a_body_nested_to_the_cap_is_refused_within_a_second_over_http(anonymous, closed):
    half = settings.SETTLE_MAX_BODY_BYTES // 2
    body = b"[" * half + (b"]" * half if closed else b"[" * half)
    warm_up(anonymous)

    response = within_a_second(lambda: anonymous.post_raw(body))

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


def test_arguments_nested_to_the_cap_are_refused_within_a_second_over_mcp(anonymous):
    depth = (settings.SETTLE_MAX_BODY_BYTES - 512) // 2
    arguments = json.dumps(question()).replace(
        '"body"', '"deep": ' + "[" * depth + "]" * depth + ', "body"', 1
    ).encode()
    warm_up(anonymous)

    response = within_a_second(lambda: mcp_post(anonymous.client, arguments))

    # Refused before the tool runs or by it: an error either way, never a 500.
    assert response.status_code < 500
    answer = response.json()
    if "result" in answer:
        assert answer["result"]["structuredContent"]["http_status"] == 400
    else:
        assert answer["error"]["code"] < 0
    assert counts() == NOTHING_WRITTEN


def test_arguments_nested_to_the_limit_are_read_and_one_level_more_is_refused_over_mcp(
    anonymous,
):
    # Inside the envelope the arguments object is the first level, as a body is over HTTP.
    at_limit = mcp_structured(
        mcp_post(anonymous.client, nested_payload(settings.SETTLE_MAX_JSON_DEPTH))
    )
    past_limit = mcp_structured(
        mcp_post(anonymous.client, nested_payload(settings.SETTLE_MAX_JSON_DEPTH + 1))
    )

    assert at_limit["http_status"] == 422
    assert past_limit["http_status"] == 400


# --- A cursor ----------------------------------------------------------------------------

def cursor_of_digits(digits: str) -> str:
    return base64.urlsafe_b64encode(b'{"after":' + digits.encode() + b"}").decode().rstrip("=")


@pytest.mark.parametrize(
    "path", ["/api/v1/threads?cursor=", "/api/v1/threads/1/replies?cursor="]
)
def test_the_longest_cursor_the_server_makes_is_read(anonymous, path):
    largest = encode_cursor(ENTRY_ID_MAX)
    assert len(largest) == CURSOR_MAX_LENGTH
    assert len(cursor_of_digits("9" * 19)) == CURSOR_MAX_LENGTH

    for cursor in (largest, cursor_of_digits("9" * 19)):
        response = anonymous.get(path + cursor)
        # The replies of thread 1: no such thread, so the cursor was read and accepted.
        assert response.status_code == (200 if "replies" not in path else 404), response.content


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param(cursor_of_digits("1" * 20), id="20-digits"),
        pytest.param(cursor_of_digits("1" * 5000), id="5000-digits"),
        pytest.param(cursor_of_digits("1" * 190_000), id="digits-to-the-cap"),
        pytest.param("A" * 190_000, id="garbage-to-the-cap"),
        pytest.param(encode_cursor(1) * 4000, id="a-cursor-repeated"),
    ],
)
def test_a_cursor_past_its_bound_is_a_bad_request_within_a_second(anonymous, cursor):
    warm_up(anonymous)

    for path in ("/api/v1/threads?cursor=", "/api/v1/threads/1/replies?cursor="):
        response = within_a_second(lambda path=path: anonymous.get(path + cursor))

        # Replies check their thread first: thread 1 does not exist.
        expected = 404 if "replies" in path else 400
        assert response.status_code == expected, response.content[:200]


@pytest.mark.parametrize("name", ["list_threads", "list_replies"])
def test_a_cursor_argument_at_the_cap_is_a_bad_request_within_a_second_over_mcp(
    anonymous, name
):
    question_id = anonymous.post(question()).json()["id"]
    arguments = {"cursor": cursor_of_digits("1" * 190_000)}
    if name == "list_replies":
        arguments["thread_id"] = question_id
    warm_up(anonymous)

    response = within_a_second(lambda: modern_call(anonymous.client, name, arguments))

    structured = mcp_structured(response)
    assert structured["http_status"] == 400
    assert structured["data"]["error"]["code"] == "bad_request"


# --- A duration --------------------------------------------------------------------------

ONE_MEBIBYTE = 1024 * 1024
# What made the old pattern backtrack: a number, a long run of spaces, and a letter.
SPACES_THEN_GARBAGE = "1" + " " * (ONE_MEBIBYTE - 512) + "x"
DURATIONS_TO_THE_LIMIT = [
    pytest.param(SPACES_THEN_GARBAGE, id="spaces-then-garbage"),
    pytest.param("1" * (ONE_MEBIBYTE - 512), id="digits"),
    pytest.param("\u0661" * (ONE_MEBIBYTE // 4) + "h", id="arabic-indic-digits"),
]


@pytest.mark.parametrize("duration", DURATIONS_TO_THE_LIMIT)
def test_retention_set_refuses_a_huge_duration_in_one_short_line_within_a_second(duration):
    def run():
        with pytest.raises(CommandError) as refused:
            call_command("retention", "set", "entry", duration,
                         stdout=StringIO(), stderr=StringIO())
        return str(refused.value)

    message = within_a_second(run)

    assert message.startswith("entry: ") and "not a duration" in message
    assert "\n" not in message and len(message) < 200
    assert not RetentionPolicy.objects.exists()


@pytest.mark.parametrize("duration", DURATIONS_TO_THE_LIMIT)
def test_the_console_refuses_a_huge_duration_within_a_second(django_user_model, duration):
    console = logged_in(staff_user(django_user_model, "admin", ADMINISTRATORS))
    # A form's whole body is bounded by Django's DATA_UPLOAD_MAX_MEMORY_SIZE.
    assert len(duration) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    console.get("/console/retention/")

    response = within_a_second(lambda: console.post(
        "/console/retention/policy", {"policy": "entry", "duration": duration}, follow=True
    ))

    assert response.status_code == 200
    assert b"Nothing changed. entry: " in response.content
    assert not RetentionPolicy.objects.exists()
    assert not AuditEvent.objects.filter(target_type="retention").exists()


@pytest.mark.parametrize("duration", DURATIONS_TO_THE_LIMIT)
def test_the_environment_reader_refuses_a_huge_duration_within_a_second(duration):
    assert within_a_second(lambda: parse_duration(duration)) is None


# --- A URL -------------------------------------------------------------------------------

def url_of_length(length: int, host: str = "hooks.example") -> str:
    start = f"https://{host}/"
    return start + "x" * (length - len(start))


def add_endpoint(url: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("endpoint", "add", "hook", url, stdout=out, stderr=err)
    return out.getvalue()


@pytest.fixture
def public_url(settings):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"


def test_an_endpoint_url_of_2000_characters_is_taken(public_url):
    url = url_of_length(URL_LIMIT)

    within_a_second(lambda: add_endpoint(url))

    assert Endpoint.objects.get().url == url


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(url_of_length(URL_LIMIT + 1), id="2001-characters"),
        pytest.param(url_of_length(ONE_MEBIBYTE), id="one-mebibyte"),
        pytest.param("https://" + "\u00e9" * ONE_MEBIBYTE + ".example/", id="huge-idn-host"),
    ],
)
def test_an_endpoint_url_past_2000_characters_is_refused_within_a_second(public_url, url):
    def run():
        with pytest.raises(CommandError) as refused:
            add_endpoint(url)
        return str(refused.value)

    message = within_a_second(run)

    assert f"longer than {URL_LIMIT} characters" in message
    assert Endpoint.objects.count() == 0


def test_an_idn_host_of_combining_marks_within_2000_characters_is_judged_within_a_second(
    public_url,
):
    host = "a" + marks(URL_LIMIT - len("https://.example/") - 1) + ".example"
    url = f"https://{host}/"
    assert len(url) == URL_LIMIT

    def run():
        with pytest.raises(CommandError) as refused:
            add_endpoint(url)
        return str(refused.value)

    assert "not a valid name" in within_a_second(run)
    assert Endpoint.objects.count() == 0


def test_the_console_refuses_a_huge_endpoint_url_within_a_second(django_user_model, public_url):
    console = logged_in(staff_user(django_user_model, "admin", ADMINISTRATORS))
    console.get("/console/deliveries/")

    response = within_a_second(lambda: console.post(
        "/console/deliveries/endpoints/add",
        {"name": "hook", "url": url_of_length(ONE_MEBIBYTE - 1024), "supports": "none"},
        follow=True,
    ))

    assert response.status_code < 500
    assert Endpoint.objects.count() == 0


# --- Keys: a shape check linear in the body, a refusal that does not grow ---------------
# SPEC 11.6: whatever a body's keys (tens of thousands, unknown, holding lone surrogates,
# at the top or inside `actor`, over HTTP or as MCP arguments), checking its shape costs
# time linear in its size, and the refusal lists at most 20 problems in at most 16 KiB.

SIXTEEN_KIB = 16 * 1024


def surrogate_keys(count: int) -> dict:
    """`count` keys each holding a lone surrogate, short enough that 20,000 fit in 256 KiB."""
    return {chr(0xD800 + n % 1024) + str(n // 1024): 0 for n in range(count)}


def unknown_keys(count: int) -> dict:
    return {f"k{n}": 0 for n in range(count)}


KEYS = {"surrogate": surrogate_keys, "unknown": unknown_keys}


def keyed_post(keys: dict, where: str) -> dict:
    payload = question()
    if where == "actor":
        payload["actor"] = {**payload["actor"], **keys}
    else:
        payload.update(keys)
    return payload


def ascii_json(payload: dict) -> bytes:
    # A lone surrogate has no UTF-8 form: a client sends it as an escape.
    return json.dumps(payload, separators=(",", ":")).encode()


def mcp_tool_raw(client, name: str, arguments: bytes):
    envelope = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": "@", "_meta": META},
    }).encode().replace(b'"@"', arguments)
    return rpc(client, envelope, **modern_headers("tools/call", name))


# Each door: how it sends a body holding the given keys, and the answer's error object.
DOORS = {
    "http-top": lambda agent, keys: agent.post_raw(ascii_json(keyed_post(keys, "top"))),
    "http-actor": lambda agent, keys: agent.post_raw(ascii_json(keyed_post(keys, "actor"))),
    "mcp-post_entry-top": lambda agent, keys: mcp_tool_raw(
        agent.client, "post_entry", ascii_json(keyed_post(keys, "top"))),
    "mcp-post_entry-actor": lambda agent, keys: mcp_tool_raw(
        agent.client, "post_entry", ascii_json(keyed_post(keys, "actor"))),
    "mcp-new_request_id": lambda agent, keys: mcp_tool_raw(
        agent.client, "new_request_id", ascii_json(keys)),
    "mcp-list_threads": lambda agent, keys: mcp_tool_raw(
        agent.client, "list_threads", ascii_json(keys)),
}


def refusal(response, door: str) -> dict:
    """The error object of a refused call, over either door."""
    if door.startswith("mcp"):
        structured = mcp_structured(response)
        assert structured["http_status"] == 422
        return structured["data"]["error"]
    assert response.status_code == 422, response.content[:300]
    return response.json()["error"]


def cpu_seconds(call) -> float:
    """The least CPU time of five calls in this process (the test client serves the
    request in it): what the request costs, not what else the machine is doing (a busy
    machine still adds to a call's CPU time now and then: caches shared with its work).
    The garbage collector is off during a call: a full collection landing in one call
    costs the test process's heap, not the request."""
    spent = []
    for _ in range(5):
        gc.disable()
        try:
            started = time.process_time()
            call()
            spent.append(time.process_time() - started)
        finally:
            gc.enable()
    return min(spent)


@pytest.mark.parametrize("kind", KEYS)
@pytest.mark.parametrize("door", DOORS)
def test_four_times_the_keys_cost_less_than_ten_times_the_time(anonymous, door, kind):
    # Linear work grows 4 times, quadratic work 16 times: 10 tells them apart with room
    # for a shared machine's noise (6 failed once in CI at 6.4 times, on linear work).
    send, make = DOORS[door], KEYS[kind]
    few, many = make(5_000), make(20_000)
    warm_up(anonymous)
    send(anonymous, make(3))

    assert refusal(send(anonymous, many), door)["code"] == "invalid_request"
    few_seconds = cpu_seconds(lambda: send(anonymous, few))
    many_seconds = cpu_seconds(lambda: send(anonymous, many))

    assert many_seconds < 10 * few_seconds, (
        f"5,000 keys: {few_seconds:.3f} s, 20,000 keys: {many_seconds:.3f} s"
    )
    assert many_seconds < 1.0
    assert counts()["entries"] == 0


def test_a_body_of_20_000_lone_surrogate_keys_is_refused_in_under_a_second_of_cpu(anonymous):
    body = ascii_json(keyed_post(surrogate_keys(20_000), "top"))
    assert len(body) <= settings.SETTLE_MAX_BODY_BYTES
    warm_up(anonymous)

    seconds = cpu_seconds(lambda: anonymous.post_raw(body))
    error = refusal(anonymous.post_raw(body), "http")

    assert seconds < 1.0, f"{seconds:.2f} s of CPU"

    assert len(error["fields"]) == 20
    assert error["fields_omitted"] == 20_000 - 20
    assert counts() == NOTHING_WRITTEN


# Characters whose JSON costs the most: an astral one (12 bytes as an ASCII escape), a
# control character and a lone surrogate (6 bytes escaped), a quote; and plain letters.
WIDE = {"astral": "\U0001f600", "control": "\x01", "surrogate": "\ud800", "quote": '"',
        "letter": "a"}


def long_keys(char: str, count: int) -> list[str]:
    """`count` keys of 100 characters, in the order SPEC 5 lists unknown keys (sorted)."""
    return sorted(f"{n:05d}" + char * 95 for n in range(count))


@pytest.mark.parametrize("where", ["top", "actor"])
@pytest.mark.parametrize("char", WIDE)
@pytest.mark.parametrize("door", ["http", "mcp"])
def test_a_refusal_lists_the_first_20_problems_cut_to_64_characters_within_16_kib(
    anonymous, door, char, where
):
    keys = long_keys(WIDE[char], 100)
    payload = ascii_json(keyed_post(dict.fromkeys(keys, 0), where))
    if door == "http":
        response = anonymous.post_raw(payload)
    else:
        response = mcp_tool_raw(anonymous.client, "post_entry", payload)

    assert len(response.content) <= SIXTEEN_KIB
    error = refusal(response, door)
    prefix = "actor." if where == "actor" else ""
    assert error["fields"] == [
        {"field": (prefix + key)[:64], "problem": "unknown field"} for key in keys[:20]
    ]
    assert error["fields_omitted"] == 100 - 20
    assert keys[1][:20] not in error["message"]  # the message names the first alone
    assert counts() == NOTHING_WRITTEN


@pytest.mark.parametrize("kind", KEYS)
@pytest.mark.parametrize("door", DOORS)
def test_no_refusal_of_a_body_full_of_keys_exceeds_16_kib(anonymous, door, kind):
    response = DOORS[door](anonymous, KEYS[kind](20_000))

    assert len(response.content) <= SIXTEEN_KIB
    error = refusal(response, door)
    assert len(error["fields"]) == 20
    assert error["fields_omitted"] >= 20_000 - 20
    if door.startswith("mcp"):
        # The text content does not carry the list a second time.
        texts = [part["text"] for part in response.json()["result"]["content"]]
        assert all(error["fields"][1]["field"] not in text for text in texts)


def test_a_refusal_of_20_problems_or_fewer_says_nothing_omitted(anonymous):
    error = refusal(anonymous.post(keyed_post(unknown_keys(20), "top")), "http")

    assert len(error["fields"]) == 20
    assert "fields_omitted" not in error


# What a JSON-RPC refusal may echo of a request: its id, its method, a tool's name, the
# version in `_meta`, the `Mcp-Method` and `Mcp-Name` headers. Each is sent 100,000
# characters long, on the era that echoes it, with the code the refusal answers.
LONG = "x" * 100_000
LEGACY = {"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25",
          "HTTP_ACCEPT": "application/json, text/event-stream"}
ECHOING_REFUSALS = {
    "id": lambda: ({"jsonrpc": "2.0", "id": LONG, "method": "no/such/method"}, LEGACY, -32600),
    "legacy method": lambda: ({"jsonrpc": "2.0", "id": 1, "method": LONG}, LEGACY, -32601),
    "legacy tool": lambda: ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": LONG, "arguments": {}}}, LEGACY, -32602),
    "modern tool": lambda: (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": LONG, "arguments": {}, "_meta": META}},
        modern_headers("tools/call", LONG), -32602),
    "_meta version": lambda: (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            **META, "io.modelcontextprotocol/protocolVersion": LONG}}},
        modern_headers("tools/list"), -32020),
    "Mcp-Method": lambda: (
        {"jsonrpc": "2.0", "id": 1, "method": LONG, "params": {"_meta": META}},
        modern_headers("y" * 100_000), -32020),
    "Mcp-Name": lambda: (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "list_threads", "arguments": {}, "_meta": META}},
        modern_headers("tools/call", LONG), -32020),
}


@pytest.mark.parametrize("echoed", ECHOING_REFUSALS)
def test_no_protocol_refusal_over_mcp_exceeds_16_kib_whatever_it_echoes(anonymous, echoed):
    body, headers, code = ECHOING_REFUSALS[echoed]()
    response = rpc(anonymous.client, ascii_json(body), **headers)

    assert len(response.content) <= SIXTEEN_KIB, response.content[:300]
    answer = response.json()
    assert answer["error"]["code"] == code and "result" not in answer
    assert answer["id"] == (None if echoed == "id" else 1)
    assert counts() == NOTHING_WRITTEN


def test_an_id_of_1000_characters_is_answered_with_it_and_a_longer_one_is_no_id(anonymous):
    def asked(rpc_id):
        body = {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/list"}
        return rpc(anonymous.client, ascii_json(body), **LEGACY).json()

    kept = asked("i" * 1000)
    assert kept["id"] == "i" * 1000 and "tools" in kept["result"]
    refused = asked("i" * 1001)
    assert refused["id"] is None and refused["error"]["code"] == -32600
    assert refused["error"]["message"] == 'Invalid Request: "id" is no integer or short string'


def test_the_message_of_a_refusal_past_20_problems_says_where_the_others_are_counted(
    anonymous
):
    few = refusal(anonymous.post(keyed_post(unknown_keys(3), "top")), "http")
    many = refusal(anonymous.post(keyed_post(unknown_keys(100), "top")), "http")

    assert few["message"] == "k0: unknown field (and 2 more problems in error.fields)"
    assert many["message"] == (
        "k0: unknown field (and 99 more problems: error.fields lists the first 20, "
        "error.fields_omitted counts the rest)"
    )
