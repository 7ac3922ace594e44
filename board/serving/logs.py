"""Logs: one JSON line per request and per job, and never a word of what callers sent.

Design note
-----------
Every process (gunicorn's master and workers, Celery's worker and beat, manage.py) logs
through the standard library with `JsonFormatter` below, so a line is one JSON object:
`time`, `level`, `logger`, `message`, plus the fields a call site passes in `extra`.
We use python-json-logger rather than structlog: it is a formatter for the standard
`logging` module, so Django's, gunicorn's, Celery's and our own existing `log.warning(...)`
calls all come out as JSON without a second logging pipeline or changed call sites.

What may appear is decided here, not at each call site:

* the request line (`settle.request`) carries method, path (never the query string),
  route, status, duration_ms, and for posts the outcome and the request_id (a UUID we
  validated, never the raw text the client sent);
* the job line (`settle.job`) carries the task's name and id, outcome and duration_ms,
  never its arguments or return value;
* an exception is written as its class name only (`error`): exception text can quote a
  request's content or a database row (SPEC 11.4).

The request's post outcome reaches the request line through a context variable that
`board.serving.metrics.post_answered` fills, so the post path stays one call.

A request line costs a few microseconds (issue 18 found it at 4% of a new post's Python
time): the formatter builds the line's object directly rather than through
python-json-logger's generic field merging and formats the time once a second, and the
request line is handed to the logger's handlers without the stack walk for its caller
(file and line, which no line shows).
"""

import contextvars
import logging
import time
import uuid

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _BaseJsonFormatter

request_log = logging.getLogger("settle.request")
job_log = logging.getLogger("settle.job")

# What the current request has learned about itself (route, post outcome, request_id).
_current: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "settle_request", default=None
)


class JsonFormatter(_BaseJsonFormatter):
    """One JSON object a line; exceptions and stacks reduced to the exception's class."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger",
                                            "asctime": "time", "exc_info": "error"})
        kwargs.setdefault("datefmt", "%Y-%m-%dT%H:%M:%S%z")
        # Django passes the request object along, whose repr holds the query string.
        kwargs.setdefault("reserved_attrs", [*RESERVED_ATTRS, "request", "server_time"])
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s", *args, **kwargs)

    def formatException(self, ei) -> str:  # noqa: N802 (logging's name)
        return ei[0].__name__ if ei and ei[0] else "Exception"

    def formatStack(self, stack_info) -> str:  # noqa: N802
        return ""

    def format(self, record: logging.LogRecord) -> str:
        # The fields and their order are python-json-logger's for this format (time,
        # level, logger, message, error, then the call site's extras), built directly.
        line = {
            "time": self._time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        # Another handler may have cached the full traceback text on the record.
        record.exc_text = None
        if record.stack_info:
            line["stack_info"] = ""
        skip = self._skip_fields
        for key, value in record.__dict__.items():
            if key not in skip and not key.startswith("_"):
                line[key] = value
        return self.serialize_log_record(line)

    def _time(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if second != self._second:
            self._second, self._second_text = second, self.formatTime(record, self.datefmt)
        return self._second_text

    _second = -1
    _second_text = ""


# --- Requests ------------------------------------------------------------------------------


def request_started(route: str) -> dict:
    """Open the current request's record; the middleware logs it when the answer leaves."""
    state = {"route": route, "started": time.monotonic()}
    _current.set(state)
    return state


def request_post_answered(*, outcome: str, request_id: str | None) -> None:
    state = _current.get()
    if state is not None:
        state["outcome"] = outcome
        if request_id:
            state["request_id"] = request_id


def request_finished(state: dict, *, method: str, path: str, status: int) -> float:
    """Log the request line; returns its duration in seconds (for the histogram too)."""
    duration = time.monotonic() - state["started"]
    fields = {
        "method": method,
        "path": path,
        "route": state["route"],
        "status": status,
        "duration_ms": round(duration * 1000, 1),
    }
    for name in ("outcome", "request_id"):
        if name in state:
            fields[name] = state[name]
    if request_log.isEnabledFor(logging.INFO):
        # What `request_log.info("request", extra=fields)` does, less the caller lookup.
        request_log.handle(request_log.makeRecord(
            request_log.name, logging.INFO, "", 0, "request", (), None, extra=fields
        ))
    _current.set(None)
    return duration


def safe_request_id(value: object) -> str | None:
    """A request_id fit for a log: a UUID in canonical form, or nothing at all."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return str(uuid.UUID(value.strip().strip('"')))
    except ValueError:
        return None


# --- Celery jobs ---------------------------------------------------------------------------

_job_started: dict[str, float] = {}


def job_started(task_id: str) -> None:
    _job_started[task_id] = time.monotonic()


def job_finished(*, task_id: str, task_name: str, state: str | None, result: object) -> None:
    """Log the job line. A job that recorded its own failure (a dict with `error`) failed."""
    started = _job_started.pop(task_id, None)
    outcome = "succeeded" if state == "SUCCESS" else (state or "unknown").lower()
    if outcome == "succeeded" and isinstance(result, dict) and result.get("error"):
        outcome = "failed"
    fields = {"job": task_name, "task_id": task_id, "outcome": outcome}
    if started is not None:
        fields["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
    if isinstance(result, BaseException):
        fields["error"] = type(result).__name__
    job_log.log(logging.INFO if outcome == "succeeded" else logging.WARNING, "job", extra=fields)


def connect_job_signals() -> None:
    """Log every Celery task run in this process (worker or eager), once per run."""
    from celery import signals

    def prerun(task_id=None, **_kwargs) -> None:
        if task_id:
            job_started(task_id)

    def postrun(task_id=None, task=None, retval=None, state=None, **_kwargs) -> None:
        job_finished(task_id=task_id or "", task_name=getattr(task, "name", "unknown"),
                     state=state, result=retval)

    signals.task_prerun.connect(prerun, weak=False, dispatch_uid="settle-job-prerun")
    signals.task_postrun.connect(postrun, weak=False, dispatch_uid="settle-job-postrun")
