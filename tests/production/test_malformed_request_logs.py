"""SPEC 12: gunicorn's own error-log lines about a request it refuses (a malformed request
line, an invalid header) say the refusal, never the request target's query, and never
the request's other text: a malformed header line can hold a token (SPEC 11.4)."""

import runpy
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

MARK = "MARKQS-12"
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("raw", "said"), MALFORMED)
def test_a_refused_request_is_logged_without_its_query(serve, raw, said):
    served = serve()

    answer = send_raw(served.base, raw.encode())
    served.stop()  # flushes both streams

    assert answer.startswith(b"HTTP/1.1 400")
    refusals = [line for line in served.lines() if "Invalid request from ip=" in line["message"]]
    assert len(refusals) == 1
    assert said in refusals[0]["message"]
    assert MARK.lower() not in served.text().lower()


def test_a_client_gone_mid_request_is_logged_without_the_bytes_it_sent():
    # gunicorn logs this one at debug level, with the unread head of the request.
    config = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))
    said = config["without_request_text"](
        "Ignored premature client disconnection. %s",
        (f"No more data after: b'POST / HTTP/1.1\\r\\nAuthorization: Bearer {MARK}'",),
    )

    assert MARK not in said
    assert said == "Ignored premature client disconnection. No more data after: b'…'"
