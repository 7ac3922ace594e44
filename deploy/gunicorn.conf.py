"""Gunicorn's settings for Settle: `gunicorn -c deploy/gunicorn.conf.py` (SPEC 12).

Everything a deployment changes comes from the environment, like Settle's own settings:

* `SETTLE_BIND` (default `127.0.0.1:$PORT`, `PORT` defaulting to 8000): where to listen,
  comma-separated for several addresses. Loopback by default: sync workers are never
  exposed directly, a buffering TLS proxy sits in front (deploy/nginx/settle.conf).
* `WEB_CONCURRENCY` (default 2 x cores + 1): sync worker processes. Each holds one
  database connection, so workers x hosts + Celery must stay under PostgreSQL's
  `max_connections` (docs/deploy.md, "Connection budget").
* `SETTLE_TRUSTED_PROXIES`: the only peers whose forwarding headers gunicorn believes.
  Gunicorn's own default believes `X-Forwarded-Proto` from any loopback client; this file
  replaces it with Settle's list, and Settle decides https for itself anyway
  (board.serving.middleware.ForwardedProtoMiddleware), whatever gunicorn concluded.
* `PROMETHEUS_MULTIPROC_DIR`: where the workers keep their metric counts so `/metrics`
  adds them up across processes. By default a folder of this server's own under
  `var/metrics/`, made at start and removed at exit; when set, it is emptied at start
  (counts from a previous run would otherwise be added in).

Flags on the command line win over this file (`--bind`, `--workers`, ...).
"""

import ipaddress
import multiprocessing
import os
import re
import shutil
import sys
from pathlib import Path

from gunicorn import glogging

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _refuse(message: str):
    # One line and a non-zero exit, no traceback: the operator fixes one variable.
    raise SystemExit(f"settle: {message}")


def _workers() -> int:
    raw = os.environ.get("WEB_CONCURRENCY", "").strip()
    if not raw:
        return 2 * multiprocessing.cpu_count() + 1
    if not raw.isdigit() or int(raw) < 1:
        _refuse(f"WEB_CONCURRENCY must be a whole number of at least 1, not {raw!r}")
    return int(raw)


def _trusted_proxies() -> str:
    networks = []
    for item in os.environ.get("SETTLE_TRUSTED_PROXIES", "").split(","):
        if not item.strip():
            continue
        try:
            networks.append(str(ipaddress.ip_network(item.strip(), strict=False)))
        except ValueError:
            _refuse(f"SETTLE_TRUSTED_PROXIES holds {item.strip()!r}, "
                    "which is not an address or network")
    # An empty string means nobody: gunicorn then never rewrites the scheme.
    return ",".join(networks)


wsgi_app = "board.wsgi:application"
chdir = str(ROOT)
bind = [
    address.strip()
    for address in (
        os.environ.get("SETTLE_BIND") or f"127.0.0.1:{os.environ.get('PORT', '8000')}"
    ).split(",")
    if address.strip()
]
workers = _workers()
worker_class = "sync"
# A worker silent this long is killed and replaced. Settle's own waits are shorter: the
# database connect timeout (5 s) and a claim's wait for another transaction (5 s).
timeout = 30
# On SIGTERM (a deploy, systemd stop) workers stop accepting and finish what they hold
# for up to this long before being killed.
graceful_timeout = 30
forwarded_allow_ips = _trusted_proxies()
# Request lines go to stdout as JSON (JsonAccessLogger); gunicorn's own messages and
# Settle's application log to stderr.
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Gunicorn 25+ opens a control socket at one fixed path per user, which a second instance
# on the same host (another port, a rolling restart) would collide with; signals suffice.
control_socket_disable = True


_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

# A request target's query: from `?` to the next space or quote. Gunicorn's own messages
# about a request it refuses ("Invalid request from ip=...: Invalid HTTP request line:
# 'GET /x?token=... HTTP/1.1 junk'") and about one that failed ("Error handling request
# /x?...") quote the raw target; queries carry tokens and cursors (SPEC 12).
_QUERY = re.compile(r"\?[^\s'\"]+")
# The rest of what gunicorn quotes about a request is the request's own text: a header
# line ("Invalid HTTP Header: 'Authorization Bearer settle_...'"), chunk data, the bytes
# left in a buffer when a client hung up ("Ignored premature client disconnection. No
# more data after: b'...'"). Any such quoted value becomes '…' (SPEC 11.4, 12: never a
# token). A request line's refusal keeps what says what was wrong with it, rebuilt from
# its safe pieces: a method, a path without its query or fragment, an HTTP version. The
# rest goes: gunicorn splits a line at its first two spaces, so a space in a query
# (`?auth=Bearer settle_...`) leaves the token where the version should be.
_ABOUT_A_REQUEST = ("Invalid request from ip=", "Ignored premature client disconnection")
_SAYS_THE_LINE = ("Invalid HTTP request line: ", "Invalid HTTP method: ", "Invalid HTTP Version: ")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_VERSION = re.compile(r"HTTP/\d\.\d")


def _line_piece(piece: str) -> str:
    if piece.isspace() or piece in _METHODS or _VERSION.fullmatch(piece) or piece == "*":
        return piece
    if piece.startswith("/"):
        return re.split(r"[?#]", piece, maxsplit=1)[0]
    return "…"


def _line_said(quoted: str) -> str:
    """A quoted request line (or its method or version), its safe pieces only."""
    pieces = re.split(r"(\s+)", quoted[1:-1])
    return quoted[0] + "".join(_line_piece(p) for p in pieces if p) + quoted[-1]


def without_request_text(message: object, args: tuple) -> str:
    """The message as gunicorn would print it, without any query string, and, about a
    request, without any of its text but its request line's safe pieces."""
    text = str(message)
    if args:
        try:
            text = text % args
        except (TypeError, ValueError):
            text = " ".join([text, *map(str, args)])
    text = _QUERY.sub("", text)
    if text.startswith(_ABOUT_A_REQUEST):
        line = any(says in text for says in _SAYS_THE_LINE)
        text = _QUOTED.sub(lambda m: _line_said(m.group()) if line else "'…'", text)
    return text


class JsonAccessLogger(glogging.Logger):
    """Gunicorn's logger, writing JSON: the access line holds method, path (never the query
    string), status and duration, and nothing else: no body, no headers, no address. Its
    own messages (error log) are written with every query string and, about a refused
    request, every quoted piece of its text but the request line left out."""

    def critical(self, msg, *args, **kwargs) -> None:
        super().critical(without_request_text(msg, args), **kwargs)

    def error(self, msg, *args, **kwargs) -> None:
        super().error(without_request_text(msg, args), **kwargs)

    def warning(self, msg, *args, **kwargs) -> None:
        super().warning(without_request_text(msg, args), **kwargs)

    def info(self, msg, *args, **kwargs) -> None:
        super().info(without_request_text(msg, args), **kwargs)

    def debug(self, msg, *args, **kwargs) -> None:
        super().debug(without_request_text(msg, args), **kwargs)

    def exception(self, msg, *args, **kwargs) -> None:
        super().exception(without_request_text(msg, args), **kwargs)

    def log(self, lvl, msg, *args, **kwargs) -> None:
        super().log(lvl, without_request_text(msg, args), **kwargs)

    def setup(self, cfg) -> None:
        super().setup(cfg)
        from board.serving.logs import JsonFormatter

        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time) -> None:
        if not self.access_log_enabled:
            return
        status = resp.status.split(None, 1)[0] if isinstance(resp.status, str) else resp.status
        method = environ.get("REQUEST_METHOD")
        self.access_log.info("access", extra={
            # The method is the client's text too: an unknown one is logged as OTHER.
            "method": method if method in _METHODS else "OTHER",
            "path": environ.get("PATH_INFO"),
            "status": int(status) if str(status).isdigit() else status,
            "duration_ms": round(request_time.total_seconds() * 1000, 1),
        })


logger_class = JsonAccessLogger


# --- Metrics across worker processes -----------------------------------------------------

_OWN_METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR" not in os.environ


def on_starting(server) -> None:
    if _OWN_METRICS_DIR:
        folder = ROOT / "var" / "metrics" / f"gunicorn-{os.getpid()}"
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    if _OWN_METRICS_DIR:
        _remove_abandoned_metrics(folder.parent)


def _remove_abandoned_metrics(parent: Path) -> None:
    """Folders of masters that died without their exit hook (kill -9, a crash)."""
    for folder in parent.glob("gunicorn-*"):
        pid = folder.name.removeprefix("gunicorn-")
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def when_ready(server) -> None:
    # SPEC 12: a configuration that cannot work is said in one line at start-up.
    public_url = os.environ.get("SETTLE_PUBLIC_URL", "")
    if (public_url.startswith("https://") and not server.cfg.is_ssl
            and not forwarded_allow_ips):
        server.log.warning(
            "SETTLE_PUBLIC_URL is https but this server has no TLS certificate and "
            "SETTLE_TRUSTED_PROXIES is empty: no request will be seen as https"
        )


def child_exit(server, worker) -> None:
    # A dead worker's live gauges must not be read any more; its counters still count.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    folder = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR", ""))
    if folder.name == f"gunicorn-{os.getpid()}":  # ours, not one the operator named
        shutil.rmtree(folder, ignore_errors=True)
