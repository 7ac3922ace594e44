"""What deploy/ holds is started here, as an operator starts it (SPEC 12, docs/deploy.md,
"Deploying"): the Procfile under honcho on one host, and the systemd units' commands."""

import os
import re
import shutil
import signal
import subprocess
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.conf import settings

from board.models import Entry
from maintenance.models import MaintenanceRun
from tests.celery_worker import test_database_url
from tests.e2e.conftest import free_port
from tests.e2e.processes import (
    BIN,
    PROCFILE,
    ROOT,
    answers,
    environment,
    new_question,
    post,
    post_expired_thread,
    started,
    wait_for_log,
    wait_until,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))


def broker_url() -> str:
    configured = settings.CELERY_BROKER_URL
    return configured if configured.startswith("redis://") else "redis://127.0.0.1:6379/0"


def purge_recorded() -> MaintenanceRun | None:
    return MaintenanceRun.objects.filter(
        job="purge-expired-threads", counts__threads__gte=1
    ).first()


def test_honcho_runs_the_procfile_and_beat_purges(tmp_path):
    # given: an expired thread, and the Procfile as an operator has it
    post_expired_thread()
    port = free_port()
    env = environment(
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=broker_url(),
        WEB_CONCURRENCY="2",
        SETTLE_TEST_BEAT_SECONDS="1",
        GUNICORN_CMD_ARGS=f"--bind 127.0.0.1:{port}",
    )
    command = f"{BIN / 'honcho'} -d {ROOT} -f {PROCFILE} start"

    # when: honcho starts web, worker and beat, and an agent posts through the web one
    with started("honcho", command, env, tmp_path) as honcho:
        base = f"http://127.0.0.1:{port}"
        assert wait_until(lambda: answers(base), seconds=60), honcho.tail()
        payload = new_question("through honcho")
        answer = post(base, payload)
        run = wait_until(purge_recorded, seconds=60)
        alive = honcho.process.poll() is None

    # then: the post was saved, beat's purge ran on the worker and was recorded
    assert answer.status == 201, answer.body
    assert Entry.objects.filter(pk=answer.body["id"], body=payload["body"]).exists()
    assert run is not None and run.error == "", honcho.tail()
    assert alive, honcho.tail()
    output = honcho.log.read_text()
    for name in ("web.1", "worker.1", "beat.1"):
        assert f"{name} started" in output, output[-3000:]


def unit(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^(\w+)=(.*)$", line)
        if match:
            values[match[1]] = match[2]
    return values


def here(text: str) -> str:
    """A unit's paths mapped from the installed layout onto this checkout and its venv."""
    return text.replace("/srv/settle/.venv/bin", str(BIN)).replace("/srv/settle", str(ROOT))


def test_the_systemd_units_are_valid_and_name_one_of_each_process(tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is needed to check the units (apt-get install systemd)")
    names = {path.name for path in UNITS}
    for path in UNITS:
        (tmp_path / path.name).write_text(here(path.read_text()).replace(
            "EnvironmentFile=/etc/settle/settle.env", f"EnvironmentFile=-{tmp_path}/settle.env"
        ))

    result = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / name) for name in sorted(names))],
        capture_output=True, text=True,
    )

    assert names == {"settle-web.service", "settle-worker.service", "settle-beat.service"}
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_the_systemd_units_commands_start_and_serve(tmp_path):
    # given: each unit's command, directory and environment file, mapped onto this checkout
    port = free_port()
    env_file = tmp_path / "settle.env"
    env_file.write_text("\n".join([
        f"DATABASE_URL={test_database_url()}",
        f"CELERY_BROKER_URL={broker_url()}",
        "SECRET_KEY=" + "s" * 60,
        "DEBUG=false",
        "WEB_CONCURRENCY=2",
        f"GUNICORN_CMD_ARGS=--bind 127.0.0.1:{port}",
    ]) + "\n")

    # when: they start the way systemd would start them
    with ExitStack() as stack:
        running = {}
        for path in UNITS:
            values = unit(path)
            assert values["EnvironmentFile"] == "/etc/settle/settle.env"
            assert values["WorkingDirectory"] == "/srv/settle"
            command = here(values["ExecStart"]).replace(str(ROOT / "var/celerybeat-schedule"),
                                      str(tmp_path / "beat-schedule"))
            env = environment()
            env.update(line.split("=", 1) for line in env_file.read_text().splitlines())
            running[path.stem] = stack.enter_context(
                started(path.stem, command, env, tmp_path)
            )
        base = f"http://127.0.0.1:{port}"
        served = wait_until(lambda: answers(base), seconds=60)
        wait_for_log(running["settle-worker"], "ready.")
        wait_for_log(running["settle-beat"], "beat: Starting...")
        answer = post(base, new_question("through the units"))
        for process in running.values():
            assert process.process.poll() is None, process.tail()
        # systemd's stop: SIGTERM to the main process, then wait.
        web = running["settle-web"].process
        os.killpg(web.pid, signal.SIGTERM)
        stopped = web.wait(timeout=40)

    # then
    assert served, running["settle-web"].tail()
    assert answer.status == 201, answer.body
    assert stopped == 0
