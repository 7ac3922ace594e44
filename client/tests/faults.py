"""A fault-injecting TCP proxy on 127.0.0.1 between the client and a live Settle.

Each connection carries one request (gunicorn's sync workers close after answering). A
write (POST /api/v1/entries, or a post_entry tools/call on /mcp) takes the next action of
the plan; everything else passes. Actions:

- "pass": forward and relay the answer;
- "drop": forward, read the server's whole answer, then reset the client's connection;
- "reset": reset the client's connection before forwarding anything;
- "hold": forward, read the answer, hold it past the client's attempt timeout, close;
- "trickle": forward, read the answer, send it one byte at a time, a byte every
  TRICKLE_SECONDS, so no single read waits long yet the whole answer takes minutes;
- "flood": forward, read the answer, then send its status and headers (its length left
  out) and a body that never ends, until the client hangs up;
- "origin": forward with a browser's Origin header added;
- "gateway:NNN": answer status NNN at once, forwarding nothing, as a proxy in front of
  Settle would (408, 425, 502; 503 comes with Retry-After: 1);
- "late:NNN": forward, read the server's answer, then answer status NNN in its place, as a
  gateway that gave up waiting (504) or a middlebox answering a 2xx of its own (202, 200).

on_forwarded, when set, is called (on the proxy's thread) each time a write has been
forwarded and answered, before the action deals with the answer.
"""

import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

TRICKLE_SECONDS = 0.2
FLOOD_CHUNK = b" " * 65536


GATEWAY_BODIES = {200: b'{"ok": true}', 202: b"", 408: b"Request Timeout", 425: b"Too Early",
                  502: b"Bad Gateway", 503: b"Service Unavailable", 504: b"Gateway Timeout"}


@dataclass
class Seen:
    requests: int = 0
    writes: int = 0
    lookups: int = 0
    write_times: list[float] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)  # the server's, to forwarded writes
    flooded: int = 0  # body bytes a flood sent
    forwarded: threading.Event = field(default_factory=threading.Event)


class FaultProxy:
    def __init__(self, upstream_port: int, *, hold_seconds: float = 3.0) -> None:
        self.upstream_port = upstream_port
        self.hold_seconds = hold_seconds
        self.plan: list[str] = []
        self.seen = Seen()
        self.on_forwarded: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self, plan: list[str] | None = None) -> None:
        with self._lock:
            self.plan = list(plan or [])
            self.seen = Seen()

    def close(self) -> None:
        self._stopped.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            request = read_request(conn)
            if request is None:
                return
            head = request.split(b"\r\n", 1)[0]
            is_write = head.startswith(b"POST /api/v1/entries") or (
                head.startswith(b"POST /mcp") and b"tools/call" in request
                and b'"post_entry"' in request)
            is_lookup = head.startswith(b"GET /api/v1/operations/") or (
                head.startswith(b"POST /mcp") and b'"get_operation"' in request)
            with self._lock:
                seen = self.seen
                action = self.plan.pop(0) if is_write and self.plan else "pass"
                seen.requests += 1
                seen.writes += is_write
                seen.lookups += is_lookup
                if is_write:
                    seen.write_times.append(time.monotonic())
            if action == "reset":
                _reset(conn)
                return
            if action.startswith("gateway:"):
                conn.sendall(_answer(int(action.split(":")[1])))
                return
            if action == "origin":
                line, rest = request.split(b"\r\n", 1)
                request = line + b"\r\nOrigin: https://elsewhere.example\r\n" + rest
            answer = self._forward(request)
            if is_write:
                seen.answers.append(answer)
                seen.forwarded.set()
                if self.on_forwarded is not None:
                    self.on_forwarded()
            if action.startswith("late:"):
                conn.sendall(_answer(int(action.split(":")[1])))
            elif action == "drop":
                _reset(conn)
            elif action == "hold":
                self._stopped.wait(self.hold_seconds)
            elif action == "flood":
                head = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
                conn.sendall(b"\r\n".join(line for line in head if not line.lower()
                                            .startswith(b"content-length:")) + b"\r\n\r\n")
                while not self._stopped.is_set():
                    conn.sendall(FLOOD_CHUNK)
                    seen.flooded += len(FLOOD_CHUNK)
            elif action == "trickle":
                for index in range(len(answer)):
                    conn.sendall(answer[index:index + 1])
                    time.sleep(TRICKLE_SECONDS)
            else:
                conn.sendall(answer)
        except OSError:
            pass
        finally:
            conn.close()

    def _forward(self, request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.upstream_port), timeout=30) as up:
            up.sendall(request)
            chunks = []
            while chunk := up.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


def read_request(conn: socket.socket) -> bytes | None:
    """One request read whole (an unread body would turn a close into a reset), or None
    when the client hung up first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    # Ask the server to close after answering, so one connection carries one request.
    return head + b"\r\nConnection: close\r\n\r\n" + body


def _answer(status: int) -> bytes:
    body = GATEWAY_BODIES[status]
    kind = b"application/json" if body.startswith(b"{") else b"text/plain"
    head = [f"HTTP/1.1 {status} Gateway".encode(), b"Content-Type: " + kind,
            f"Content-Length: {len(body)}".encode(), b"Connection: close"]
    if status == 503:
        head.append(b"Retry-After: 1")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
