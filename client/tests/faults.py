"""A fault-injecting TCP proxy on 127.0.0.1 between the client and a live Settle.

Each connection carries one request (gunicorn's sync workers close after answering). A
write (POST /api/v1/entries, or a post_entry tools/call on /mcp) takes the next action of
the plan; everything else passes. Actions:

- "pass": forward and relay the answer;
- "drop": forward, read the server's whole answer, then reset the client's connection;
- "reset": reset the client's connection before forwarding anything;
- "hold": forward, read the answer, hold it past the client's attempt timeout, close;
- "origin": forward with a browser's Origin header added.
"""

import socket
import struct
import threading
from dataclasses import dataclass, field


@dataclass
class Seen:
    writes: int = 0
    lookups: int = 0
    forwarded: threading.Event = field(default_factory=threading.Event)


class FaultProxy:
    def __init__(self, upstream_port: int, *, hold_seconds: float = 3.0) -> None:
        self.upstream_port = upstream_port
        self.hold_seconds = hold_seconds
        self.plan: list[str] = []
        self.seen = Seen()
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
            request = _read_request(conn)
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
                seen.writes += is_write
                seen.lookups += is_lookup
            if action == "reset":
                _reset(conn)
                return
            if action == "origin":
                line, rest = request.split(b"\r\n", 1)
                request = line + b"\r\nOrigin: https://elsewhere.example\r\n" + rest
            answer = self._forward(request)
            if is_write:
                seen.forwarded.set()
            if action == "drop":
                _reset(conn)
            elif action == "hold":
                self._stopped.wait(self.hold_seconds)
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


def _read_request(conn: socket.socket) -> bytes | None:
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


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
