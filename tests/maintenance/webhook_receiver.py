"""A real webhook receiver for the delivery tests: an HTTP server on 127.0.0.1 in a thread.

It does what a careful receiver does: verifies the Standard Webhooks signature with the
`standardwebhooks` library, records each notice once per `webhook-id` (dedupe), and
answers lookups (`GET /lookup/<id>`: 200 when it holds that notice, else 404). Each POST
takes the next behaviour from `script` (then `default`): a status code (with headers),
`hang` (record, then answer only after `hang_seconds`), `close` (read the request, record
it, close the connection without answering), or a callable run before answering.
"""

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.db import connections
from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool
    at: float


@dataclass
class Behaviour:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    close: bool = False
    drip: bool = False  # answer one byte at a time, slowly, for `hang_seconds`
    before: object = None  # a callable run (in the server thread) before answering


class Receiver:
    def __init__(self, secrets: list[str] | None = None, *, hang_seconds: float = 3.0):
        self.secrets = list(secrets or [])
        self.hang_seconds = hang_seconds
        self.script: list[Behaviour] = []
        self.default = Behaviour()
        self.lookup_status: int | None = None  # force a lookup answer; None: the real one
        self.seen: list[Seen] = []
        self.notices: dict[str, dict] = {}
        self.duplicates = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                receiver._post(self)

            def do_GET(self) -> None:
                receiver._get(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        # Polled every 20 ms so close() returns at once: serve_forever's default, half a
        # second, would be paid at the end of each of the hundreds of tests that use one.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/settle?token=receiver-secret"

    @property
    def lookup_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/lookup/{{delivery_id}}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def posts(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.method == "POST"]

    def lookups(self) -> list[Seen]:
        return [seen for seen in self.seen if seen.method == "GET"]

    # --- handling ---

    def _verify(self, body: bytes, headers: dict[str, str]) -> bool:
        for secret in self.secrets:
            try:
                Webhook(secret).verify(body, headers, json_parse=False)
                return True
            except WebhookVerificationError:
                continue
        return False

    def _record(self, handler, body: bytes) -> Seen:
        headers = {key.lower(): value for key, value in handler.headers.items()}
        seen = Seen(
            method=handler.command, path=handler.path, headers=headers, body=body,
            verified=self._verify(body, headers), at=time.monotonic(),
        )
        with self.lock:
            self.seen.append(seen)
        return seen

    def _post(self, handler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
        seen = self._record(handler, body)
        with self.lock:
            behaviour = self.script.pop(0) if self.script else self.default
        if behaviour.before:
            try:
                behaviour.before()
            finally:
                connections.close_all()  # this server thread's own, if it used one
        accept = seen.verified and (behaviour.hang or behaviour.close or
                                    200 <= behaviour.status < 300)
        if accept:
            with self.lock:
                message_id = seen.headers["webhook-id"]
                if message_id in self.notices:
                    self.duplicates += 1
                else:
                    self.notices[message_id] = json.loads(body)
        if behaviour.close:
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if behaviour.hang:
            time.sleep(self.hang_seconds)
        if behaviour.drip:
            self._drip(handler)
            return
        status = behaviour.status if seen.verified else 401
        self._answer(handler, status, behaviour.headers)

    def _drip(self, handler) -> None:
        # Each byte well inside any per-read timeout; the whole answer far beyond it.
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        pause = self.hang_seconds / len(answer)
        try:
            for byte in answer:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(pause)
        except OSError:
            pass

    def _get(self, handler) -> None:
        seen = self._record(handler, b"")
        message_id = handler.path.rsplit("/", 1)[-1]
        status = 200 if message_id in self.notices else 404
        if not seen.verified:
            status = 401
        if self.lookup_status is not None:
            status = self.lookup_status
        self._answer(handler, status, {})

    def _answer(self, handler, status: int, headers: dict[str, str]) -> None:
        payload = b'{"ok": true}' if status < 400 else b'{"error": "no"}'
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:
            pass  # the sender gave up (timeout): nothing to answer to


class Listener:
    """A listening socket that only counts connections: proof that none was made."""

    def __init__(self, host: str = "127.0.0.1", family: int = socket.AF_INET):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        self.sock.close()


class RawReceiver:
    """A server that reads the request and writes `answer` bytes as they are: a status
    line or headers no HTTP library would send."""

    def __init__(self, answer: bytes):
        self.answer = answer
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            try:
                conn.settimeout(2)
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                self.requests += 1
                conn.sendall(self.answer)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        self.sock.close()
