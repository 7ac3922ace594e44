"""What a refused shape costs the server and how large its answer is (SPEC 11.6, issue 38).

`python tests/bench/refusal_cost.py` on the configured database (DATABASE_URL, else
var/bench-refusals.sqlite3), making its tables first. Each body is the largest of its
kind under the 256 KiB cap, sent with no token through Django's test client in this one
process; printed: the CPU time of the request (`time.process_time`, best of 3, after one
untimed warm-up request on the same route) and the size of the answer's body.

- keys holding a lone surrogate (`"\\ud800" + n`), at the top or inside `actor`, over
  `POST /api/v1/entries`, MCP `post_entry` and the anonymous MCP `new_request_id`;
- plain unknown keys, over HTTP and MCP `post_entry`;
- 20,000 arguments to the anonymous MCP `list_threads`.
"""

import json
import logging
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench-refusals.sqlite3'}")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "refusal-cost-only-" + "x" * 40)
os.environ["SETTLE_SOURCE_HOURLY_LIMIT"] = os.environ["SETTLE_OVERALL_HOURLY_LIMIT"] = "1000000000"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from tests.bench.http_bench import question_payload  # noqa: E402

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ROOM = 512  # left under the cap for the MCP envelope


def surrogate_keys(count: int) -> dict:
    # Each key a lone surrogate and a short number: a 256 KiB body holds 20,000 of them.
    return {chr(0xD800 + n % 1024) + str(n // 1024): 0 for n in range(count)}


def plain_keys(count: int) -> dict:
    return {f"k{n}": 0 for n in range(count)}


def filled(make) -> tuple[bytes, int]:
    """The largest `make(n)` (JSON, ASCII-escaped as a client would send a lone
    surrogate) under the cap, and its n."""
    cap = settings.SETTLE_MAX_BODY_BYTES - ROOM
    low, high = 0, cap
    while low < high:
        middle = (low + high + 1) // 2
        if len(compact(make(middle))) <= cap:
            low = middle
        else:
            high = middle - 1
    return compact(make(low)), low


def compact(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def at_top(keys):
    return lambda n: {**question_payload(str(uuid.uuid4())), **keys(n)}


def in_actor(keys):
    def make(n):
        payload = question_payload(str(uuid.uuid4()))
        payload["actor"] = {**payload["actor"], **keys(n)}
        return payload
    return make


def alone(keys):
    return keys


def http_post(client: Client, body: bytes):
    return client.post("/api/v1/entries", data=body, content_type="application/json")


def mcp_call(tool: str):
    def send(client: Client, arguments: bytes):
        envelope = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": "@", "_meta": META},
        }).encode().replace(b'"@"', arguments)
        return client.post(
            "/mcp", data=envelope, content_type="application/json",
            HTTP_MCP_PROTOCOL_VERSION=MODERN, HTTP_MCP_METHOD="tools/call",
            HTTP_MCP_NAME=tool, HTTP_ACCEPT="application/json, text/event-stream",
        )
    return send


CASES = [
    ("surrogate keys at the top, HTTP", at_top(surrogate_keys), http_post),
    ("surrogate keys in actor, HTTP", in_actor(surrogate_keys), http_post),
    ("surrogate keys at the top, MCP post_entry", at_top(surrogate_keys), mcp_call("post_entry")),
    ("surrogate keys in actor, MCP post_entry", in_actor(surrogate_keys),
     mcp_call("post_entry")),
    ("surrogate keys, MCP new_request_id", alone(surrogate_keys), mcp_call("new_request_id")),
    ("unknown keys at the top, HTTP", at_top(plain_keys), http_post),
    ("unknown keys at the top, MCP post_entry", at_top(plain_keys), mcp_call("post_entry")),
    ("unknown keys, MCP list_threads", alone(plain_keys), mcp_call("list_threads")),
]


def main() -> None:
    logging.disable(logging.CRITICAL)  # the request log's lines, one per request
    call_command("migrate", verbosity=0)
    client = Client(HTTP_HOST="127.0.0.1")
    print(f"{'case':45} {'keys':>6} {'body':>7} {'status':>6} {'CPU s':>7} {'answer':>9}")
    for name, make, send in CASES:
        body, keys = filled(make)
        send(client, json.dumps(make(3)).encode())  # warm: this route's first request
        best = None
        for _ in range(3):
            started = time.process_time()
            response = send(client, body)
            spent = time.process_time() - started
            best = spent if best is None else min(best, spent)
        status = response.status_code
        if name.endswith(("post_entry", "new_request_id", "list_threads")):
            status = response.json()["result"]["structuredContent"]["http_status"]
        print(f"{name:45} {keys:6} {len(body):7} {status:6} {best:7.3f} "
              f"{len(response.content):9}")


if __name__ == "__main__":
    main()
