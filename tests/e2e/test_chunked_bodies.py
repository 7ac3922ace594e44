"""A body sent without a length (`Transfer-Encoding: chunked`) is read as any other,
through gunicorn, which decodes the chunks (board/serving/chunked.py)."""

import http.client
import json
import socket
from urllib.parse import urlsplit

import pytest

from board.models import Entry
from receipts.models import Receipt
from tests.conftest import question

pytestmark = pytest.mark.django_db(transaction=True)


def post_chunked(base: str, path: str, body: bytes, **headers: str) -> tuple[int, dict]:
    """POST `body` in 1 KiB chunks, with no Content-Length."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    chunks = (body[i:i + 1024] for i in range(0, len(body), 1024))
    connection.request(
        "POST", path, body=chunks, encode_chunked=True,
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked", **headers},
    )
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    return response.status, answer


def test_a_chunked_post_is_saved(gunicorn):
    payload = question()

    status, answer = post_chunked(gunicorn, "/api/v1/entries", json.dumps(payload).encode())

    assert status == 201, answer
    assert answer["request_id"] == payload["request_id"]
    assert Entry.objects.count() == 1


def test_a_chunked_body_over_the_cap_is_refused_as_too_large(gunicorn):
    payload = question(body="x" * 300_000)

    status, answer = post_chunked(gunicorn, "/api/v1/entries", json.dumps(payload).encode())

    assert status == 400
    assert answer["error"]["code"] == "bad_request"
    assert "256 KiB" in answer["error"]["message"]
    assert Entry.objects.count() == 0
    assert Receipt.objects.count() == 0


def test_a_chunked_mcp_request_is_answered(gunicorn):
    message = {"jsonrpc": "2.0", "id": 7, "method": "ping"}

    status, answer = post_chunked(
        gunicorn, "/mcp", json.dumps(message).encode(),
        Accept="application/json", **{"MCP-Protocol-Version": "2025-06-18"},
    )

    assert status == 200, answer
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_a_body_whose_chunks_cannot_be_decoded_is_refused_in_the_contracts_shape(gunicorn):
    address = urlsplit(gunicorn)
    raw = (
        b"POST /api/v1/entries HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"ZZ\r\n{\"request_id\": 1}\r\n0\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(body)["error"]["code"] == "bad_request"
    assert Entry.objects.count() == 0
