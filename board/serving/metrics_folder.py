"""A metrics folder for servers started without deploy/gunicorn.conf.py (SPEC 12).

prometheus-client adds up the counts of several worker processes only when every one of
them writes to the same PROMETHEUS_MULTIPROC_DIR. Our gunicorn config makes that folder;
a plain `gunicorn board.wsgi:application -w 3` (a Dockerfile, a buildpack) does not, and
each worker would then count alone: a scrape would show one worker's share, silently.

So when the variable is unset, wsgi.py calls `folder_for_this_server()` before anything
imports prometheus-client. The folder is named after the server's master process (its pid
and its start time, so a reused pid is not mistaken for it): a gunicorn worker that loads
the app after the fork uses its parent's, a server that loads the app before forking
(`--preload`, a single process) uses its own, and the children inherit the variable.
Folders of masters that are no longer running are removed on the way.
"""

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARENT = ROOT / "var" / "metrics"
PREFIX = "wsgi-"


def folder_for_this_server() -> Path | None:
    """Set PROMETHEUS_MULTIPROC_DIR to this server's own folder, unless it is set."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return None
    master = os.getppid() if _loaded_in_gunicorn_worker() else os.getpid()
    folder = PARENT / f"{PREFIX}{_process_key(master)}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        # A read-only checkout: say so in one line; counts then stay per process.
        print(f"settle: metrics cannot be added up across worker processes: "
              f"{folder} cannot be made ({error.strerror}); set PROMETHEUS_MULTIPROC_DIR",
              file=sys.stderr)
        return None
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    _remove_abandoned(keep=folder)
    return folder


def _loaded_in_gunicorn_worker() -> bool:
    """True when a gunicorn worker (not the master) is importing the app right now."""
    frame = sys._getframe()
    while frame is not None:
        if f"gunicorn{os.sep}workers{os.sep}" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _process_key(pid: int) -> str:
    started = _start_time(pid)
    return f"{pid}-{started}" if started else str(pid)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), None elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces, so count after its ")".
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _remove_abandoned(*, keep: Path) -> None:
    for folder in PARENT.glob(f"{PREFIX}*"):
        if folder == keep:
            continue
        pid, _, started = folder.name.removeprefix(PREFIX).partition("-")
        if pid.isdigit() and not _running(int(pid), started):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not started or _start_time(pid) in (started, None)
