"""The embedded broker (`filesystem://`) hands a consumer whole messages only.

kombu's own filesystem transport creates a message's file where consumers look and then
writes it; a worker that took it in between read nothing and stopped ("Unrecoverable
error: JSONDecodeError"). Large messages make that window wide enough to see every time.
"""

import json
import threading
from pathlib import Path

import pytest
from django.conf import settings
from kombu import Connection

from board.celery import app
from board.serving.embedded_broker import Transport

MESSAGES = 20
PADDING = "x" * 2_000_000


def test_no_message_file_is_seen_before_it_is_whole(tmp_path: Path) -> None:
    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path),
               "control_folder": str(tmp_path / "control")}
    unreadable: list[str] = []
    writing = threading.Event()
    writing.set()

    def read_every_message_file() -> None:
        while writing.is_set():
            for path in tmp_path.glob("*.msg"):
                try:
                    data = path.read_bytes()
                except FileNotFoundError:  # taken by the consumer meanwhile
                    continue
                try:
                    json.loads(data)
                except ValueError:
                    unreadable.append(path.name)

    reader = threading.Thread(target=read_every_message_file)
    reader.start()
    with Connection("filesystem://", transport=Transport, transport_options=options) as conn:
        queue = conn.SimpleQueue("settle-test")
        try:
            for n in range(MESSAGES):
                queue.put({"n": n, "padding": PADDING})
        finally:
            writing.clear()
            reader.join()
        received = []
        for _ in range(MESSAGES):
            message = queue.get(timeout=30)
            received.append(message.payload["n"])
            message.ack()

    assert unreadable == []
    assert received == list(range(MESSAGES))
    assert not list(tmp_path.glob("*.part"))


@pytest.mark.skipif(
    not settings.CELERY_BROKER_URL.startswith("filesystem://"),
    reason="CELERY_BROKER_URL names a broker server",
)
def test_celery_uses_the_embedded_broker_when_no_broker_is_configured() -> None:
    with app.connection_for_write() as conn:
        assert isinstance(conn.transport, Transport)
