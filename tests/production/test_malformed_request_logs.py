"""SPEC 12: gunicorn's own error-log lines about a request it refuses (a malformed request
line, an invalid header) say the refusal, never the request target's query, and never
the request's other text: a malformed header line can hold a token (SPEC 11.4)."""

import json
import runpy
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.production.conftest import served_launch, wait_until_up

MARK = "MARKQS-12"
REFUSED = "Invalid request from ip="
ROOT = Path(__file__).resolve().parents[2]
# (what is sent, what the refusal line says instead of the raw target)
MALFORMED = [
    pytest.param(f"GET /x?token={MARK}\r\n\r\n", "request line: 'GET /x'", id="no-version"),
    pytest.param(f"GET  /x?token={MARK} HTTP/1.1\r\n\r\n", "request line: 'GET  /x HTTP/1.1'",
                 id="two-spaces"),
    pytest.param(f"GET /x?token={MARK}\x01 HTTP/1.1\r\n\r\n", "request line: 'GET /x HTTP/1.1'",
                 id="control-character"),
    pytest.param(f"GET /x?token={MARK} HTTP/1.1 junk\r\n\r\n", "Invalid HTTP Version",
                 id="bad-version"),
    pytest.param(f"GET /x?token={MARK} HTTP/1.1\r\nBad Header: v\r\n\r\n",
                 "Invalid HTTP header name", id="header"),
    pytest.param(f"POST /x HTTP/1.1\r\nHost: h\r\nAuthorization Bearer settle_{MARK}\r\n\r\n",
                 "Invalid HTTP Header: '…'", id="header-line-without-colon"),
    pytest.param(f"POST /x HTTP/1.1\r\nHost: h\r\nX {MARK}: v\r\n\r\n",
                 "Invalid HTTP header name: '…'", id="header-name-with-a-token"),
    pytest.param(f"GET /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer\r\n {MARK}\r\n\r\n",
                 "Obsolete line folding", id="folded-header"),
    pytest.param(f"GET /x?auth=Bearer settle_{MARK} HTTP/1.1\r\n\r\n",
                 "Invalid HTTP Version: '… HTTP/1.1'", id="space-in-query"),
    pytest.param(f"GET /x#access_token=settle_{MARK}\r\n\r\n",
                 "request line: 'GET /x'", id="fragment"),
    pytest.param(f"x-settle-{MARK.lower()} /x HTTP/1.1\r\n\r\n", "Invalid HTTP method: '…'",
                 id="method"),
]


def send_raw(base: str, data: bytes) -> bytes:
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@dataclass
class Refusal:
    answer: bytes
    logged: list[dict]  # the lines logged from its sending to the next request's


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def gunicorn_refusals(tmp_path_factory, django_db_setup) -> tuple[dict[str, Refusal], str]:
    """One production gunicorn (deploy/gunicorn.conf.py) refuses each request of MALFORMED
    in turn, the next sent once the last one's refusal is logged (starting a server for
    each took most of each test's time). Returns each request's answer and the lines
    logged for it, and the whole of both logs, read after the server stopped."""
    served = served_launch(tmp_path_factory.mktemp("malformed"))
    marks: list[tuple[str, bytes, int, int]] = []
    try:
        wait_until_up(served.base, served.process, served.stderr)
        for param in MALFORMED:
            raw = param.values[0]
            before = served.text().count(REFUSED)
            at = (len(_lines(served.stdout)), len(_lines(served.stderr)))
            answer = send_raw(served.base, raw.encode())
            marks.append((raw, answer, *at))
            deadline = time.monotonic() + 10
            while served.text().count(REFUSED) == before and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        served.stop()  # flushes both streams
    stdout, stderr = _lines(served.stdout), _lines(served.stderr)
    ends = [(out, err) for _, _, out, err in marks[1:]] + [(len(stdout), len(stderr))]
    refusals = {}
    for (raw, answer, out, err), (out_end, err_end) in zip(marks, ends, strict=True):
        logged = stdout[out:out_end] + stderr[err:err_end]
        refusals[raw] = Refusal(answer, [json.loads(line) for line in logged])
    return refusals, served.text()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("raw", "said"), MALFORMED)
def test_a_refused_request_is_logged_without_its_query(gunicorn_refusals, raw, said):
    refusals, text = gunicorn_refusals
    refusal = refusals[raw]

    assert refusal.answer.startswith(b"HTTP/1.1 400")
    found = [line for line in refusal.logged if REFUSED in line["message"]]
    assert len(found) == 1, refusal.logged
    assert said in found[0]["message"]
    assert MARK.lower() not in text.lower()


def test_a_client_gone_mid_request_is_logged_without_the_bytes_it_sent():
    # gunicorn logs this one at debug level, with the unread head of the request.
    config = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))
    said = config["without_request_text"](
        "Ignored premature client disconnection. %s",
        (f"No more data after: b'POST / HTTP/1.1\\r\\nAuthorization: Bearer {MARK}'",),
    )

    assert MARK not in said
    assert said == "Ignored premature client disconnection. No more data after: b'…'"
