"""docs/deliveries.md's "Try webhooks locally", run as written from a second shell: the
`make manage` lines (no SETTLE_PUBLIC_URL of their own), the example receiver, a post,
and the delivery it makes (issue 32, slip 1); and its unknown-outcome inbox recipe, a
receiver that reads and never answers (issue 38, 8.4)."""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from maintenance.deliveries.models import Delivery
from tests.celery_worker import ROOT, test_database_url
from tests.conftest import question
from tests.e2e.conftest import free_port
from tests.e2e.processes import stop, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

DOC = ROOT / "docs" / "deliveries.md"


def recipe_command() -> str:
    """The `make manage ARGS="endpoint add ..."` block, joined as a shell joins it."""
    section = DOC.read_text().split("## Try webhooks locally", 1)[1]
    block = re.search(r"\n\n((?:    .*\n)+)", section)[1]
    return re.sub(r"\\\n\s*", "", block).strip()


def second_shell(port: int) -> dict[str, str]:
    """A shell of the same user beside `make run`: nothing Settle-specific exported."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("SETTLE_") and name not in ("PORT", "DEBUG", "SECRET_KEY")
           # nor a make of its own around it (`make test`): its nested make would say
           # which directory it enters and leaves, as no second shell's does
           and name not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    env.update(VENV=str(Path(sys.executable).parent.parent), DATABASE_URL=test_database_url())
    return env


def make_manage(command: str, port: int, **settings: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=ROOT,
                          env={**second_shell(port), **settings},
                          capture_output=True, text=True, timeout=120)


def test_the_recipe_adds_an_endpoint_and_delivers_to_the_example_receiver(client, tmp_path):
    port = free_port()
    command = recipe_command().replace("127.0.0.1:9000", f"127.0.0.1:{port}")
    assert command.startswith('make manage ARGS="endpoint add local')

    added = make_manage(command, port)

    assert added.returncode == 0, added.stderr
    secret = added.stdout.strip().splitlines()[-1]
    assert secret.startswith("whsec_")
    log = tmp_path / "receiver.log"
    receiver = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "webhook_receiver.py"), secret, str(port)],
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        assert wait_until(lambda: "receiving on" in log.read_text(), seconds=30), log.read_text()
        posted = client.post("/api/v1/entries", question(), content_type="application/json")
        assert posted.status_code == 201

        sent = make_manage('make manage ARGS="deliveries run"', port)
        listed = make_manage('make manage ARGS="deliveries list"', port)

        assert sent.returncode == 0, sent.stderr
        assert wait_until(lambda: "entry.created" in log.read_text(), seconds=30)
        assert listed.returncode == 0, listed.stderr
        assert "succeeded" in listed.stdout
        assert f"http://127.0.0.1:8000/threads/{posted.json()['id']}" in log.read_text()
    finally:
        stop(receiver)


def inbox_recipe() -> list[str]:
    """The indented blocks of "The unknown-outcome inbox, with something in it", each
    joined as a shell joins it: the receiver, the endpoint, sending and reading, and what
    that prints."""
    section = DOC.read_text().split("### The unknown-outcome inbox, with something in it",
                                    1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"\n\n((?:    .*\n)+)", section)
    return [re.sub(r"\\\n\s*", "", "".join(line[4:] + "\n" for line in block.splitlines()))
            for block in blocks]


def test_the_inbox_recipe_leaves_a_delivery_whose_outcome_is_unknown(client, tmp_path):
    port = free_port()
    receiver_code, add, send_and_read, _printed = (
        block.replace("127.0.0.1:9001", f"127.0.0.1:{port}").replace(
            '"127.0.0.1", 9001', f'"127.0.0.1", {port}')
        for block in inbox_recipe())
    assert "--supports none" in add
    log = tmp_path / "receiver.log"
    receiver = subprocess.Popen(["bash", "-c", receiver_code], stdout=log.open("w"),
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert wait_until(lambda: _answers(port), seconds=30), log.read_text()
        added = make_manage(add, port)
        assert added.returncode == 0, added.stderr
        posted = client.post("/api/v1/entries", question(), content_type="application/json")
        assert posted.status_code == 201

        # The send waits SETTLE_DELIVERY_TIMEOUT for the answer that never comes: 1 s
        # here rather than the default 10 s, an outcome no less unknown.
        sent, listed = (make_manage(line, port, SETTLE_DELIVERY_TIMEOUT="1s")
                        for line in send_and_read.strip().splitlines())

        assert sent.returncode == 0, sent.stderr
        assert listed.returncode == 0, listed.stderr
        [row] = [line for line in listed.stdout.splitlines() if "  outcome_unknown  " in line]
        assert "  silent  " in row and "attempts 1" in row, row
        delivery = Delivery.objects.get()
        assert (delivery.state, delivery.entry_id) == ("outcome_unknown", posted.json()["id"])
    finally:
        stop(receiver)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
