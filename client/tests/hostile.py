"""A hostile board on 127.0.0.1: it answers every request 201 (or the status it is given)
and does not stop talking.

- "flood": a 201 whose body never ends (no length; it would end when the board hangs up),
  as fast as the socket takes it;
- "gib": a 201 of exactly 1 GiB, its length announced;
- "bomb": a 201 of 256 KiB gzipped that unzips to 256 MiB;
- "trickle": a 201 whose body comes a byte every TRICKLE_SECONDS for ever, so each read
  waits far less than any per-read timeout while the whole answer never ends;
- "answer": the status, extra headers and body it is given, at once, to every request: a
  429 asking for a wait that is no number of seconds, a read answered 900 levels deep;
- "mcp": an /mcp that answers each JSON-RPC request in kind (JSON, not a stream), and
  every tools/call with the body it is given as the result's structuredContent.

Nothing here is Settle: it stands for a board gone wrong, or one in the wrong hands.
"""

import functools
import gzip
import json
import socket
import threading
import time

from faults import read_request

BEHAVIOURS = ("flood", "gib", "bomb", "trickle", "answer", "mcp")
TRICKLE_SECONDS = 0.05
CHUNK = b" " * 65536
GIB = 2**30
HEAD = b"HTTP/1.1 %d Hostile\r\nContent-Type: application/json\r\nConnection: close\r\n"


@functools.cache
def _bomb() -> bytes:
    """256 MiB of spaces gzipped to 256 KiB: made once a process (it takes a second or
    two), the same bytes for each test that sends it."""
    return gzip.compress(b" " * 2**28, compresslevel=9)


class HostileBoard:
    def __init__(self, behaviour: str, status: int = 201, *, headers: dict[str, str] | None = None,
                 body: bytes = b"") -> None:
        assert behaviour in BEHAVIOURS
        self.behaviour = behaviour
        self.head = HEAD % status + b"".join(
            f"{name}: {value}\r\n".encode() for name, value in (headers or {}).items())
        self.body = body
        self.requests = 0
        self.writes = 0  # POSTs, write attempts
        self.sent = 0  # body bytes, all connections together
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._bomb = _bomb() if behaviour == "bomb" else b""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

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

    def _send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        with self._lock:
            self.sent += len(data)

    def _serve(self, conn: socket.socket) -> None:
        try:
            request = read_request(conn)
            if request is None:
                return
            with self._lock:
                self.requests += 1
                self.writes += request.startswith(b"POST ") and (
                    self.behaviour != "mcp" or b'"tools/call"' in request)
            if self.behaviour == "mcp":
                conn.sendall(self._mcp_answer(request))
            elif self.behaviour == "answer":
                conn.sendall(self.head + b"Content-Length: %d\r\n\r\n" % len(self.body))
                self._send(conn, self.body)
            elif self.behaviour == "gib":
                conn.sendall(self.head + b"Content-Length: %d\r\n\r\n" % GIB)
                for _ in range(GIB // len(CHUNK)):
                    self._send(conn, CHUNK)
            elif self.behaviour == "bomb":
                conn.sendall(self.head + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
                             % len(self._bomb))
                self._send(conn, self._bomb)
            else:
                conn.sendall(self.head + b"\r\n")
                while not self._stopped.is_set():
                    if self.behaviour == "flood":
                        self._send(conn, CHUNK)
                    else:
                        self._send(conn, b" ")
                        time.sleep(TRICKLE_SECONDS)
        except OSError:
            pass  # the client hung up: what it should do
        finally:
            conn.close()

    def _mcp_answer(self, request: bytes) -> bytes:
        if not request.startswith(b"POST "):
            return b"HTTP/1.1 405 Hostile\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        message = json.loads(request.split(b"\r\n\r\n", 1)[1])
        if "id" not in message:  # a notification
            return b"HTTP/1.1 202 Hostile\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        method = message["method"]
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "hostile", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": []}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": self.body.decode()}],
                      "structuredContent": json.loads(self.body), "isError": True}
        else:
            result = {}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        return self.head + b"Content-Length: %d\r\n\r\n" % len(body) + body
