"""Where a live gunicorn worker spends a new post's time: py-spy over wrk's load.

`python tests/bench/spy_post.py [--gil] [--seconds N] [--path /mcp]` on the configured
database (DATABASE_URL, else var/bench.sqlite3): starts gunicorn as `make bench` does
(2 sync workers), drives new authenticated posts with wrk (32 connections; with
`--path /api/v1/request-ids`, the no-database request without a token), samples every
worker with py-spy (`pip install py-spy`; root, or ptrace allowed) and prints where the
samples fall. Without `--gil` the samples are wall time (`--idle`: waiting on the database
counts); with it only samples holding the GIL (Python's own work). The raw stacks are kept
in var/spy-post-<wall|gil>.txt for a flame graph (`flamegraph.pl`, speedscope).

Shares are of the samples taken inside a request (under gunicorn's `handle_request`);
a worker waiting in `accept` is not working on a post.
"""

import argparse
import collections
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.http_bench import (  # noqa: E402
    bench_environment,
    manage,
    new_post_script,
    plain_script,
    run_wrk,
    start_server,
    warm,
)

# The ceiling (`--path /api/v1/request-ids`): a request without a token, no database.
CEILING = "/api/v1/request-ids"

# Layers, as inclusive shares: a sample counts toward a layer when one of its frames
# matches (the function's name and file, as py-spy prints them). Differences between
# nested layers give a layer's own cost: the middleware chain is the first middleware
# minus Django's `_get_response` (URL resolving and the view).
LAYERS = (
    ("the WSGI app (outside: gunicorn parsing and writing)", "WSGIHandler.__call__ (django/"),
    ("the middleware chain and below", "ObservedRequestMiddleware.__call__ ("),
    ("URL resolving and the view", "BaseHandler._get_response (django/"),
    ("the view (ninja operation)", "Operation.run (ninja/"),
    ("the post (services)", "entry_post (board/services.py)"),
    ("the request log line", "request_finished (board/serving/logs.py)"),
    ("the request histogram", "request_observed (board/serving/metrics.py)"),
    ("the post counter and its log field", "post_answered (board/serving/metrics.py)"),
    ("database driver (psycopg)", "(psycopg/"),
    ("database driver (sqlite3)", "(django/db/backends/sqlite3/"),
    ("Django ORM (models and queries)", "(django/db/models/"),
    ("sessions, CSRF, auth, messages middleware", "(django/contrib/sessions/middleware.py)"),
    ("", "(django/middleware/csrf.py)"),
    ("", "(django/contrib/auth/middleware.py)"),
    ("", "(django/contrib/messages/middleware.py)"),
    ("CSP middleware", "(csp/middleware.py)"),
    ("axes, OTP, console sessions, 2FA middleware", "(axes/middleware.py)"),
    ("", "(django_otp/middleware.py)"),
    ("", "(moderation/access/sessions.py)"),
    ("", "(moderation/access/two_factor.py)"),
)


def layer_names() -> list[str]:
    names, current = [], ""
    for name, _ in LAYERS:
        current = name or current
        if current not in names:
            names.append(current)
    return names


def layers_of(frames: list[str]) -> set[str]:
    found, current = set(), ""
    for name, mark in LAYERS:
        current = name or current
        if any(mark in frame and not _passes_through(mark, frame) for frame in frames):
            found.add(current)
    return found


def _passes_through(mark: str, frame: str) -> bool:
    """A middleware's `__call__` holds the whole rest of the request; a mark that names
    only a file counts that file's other functions (its own work)."""
    return mark.startswith("(") and ".__call__ (" in frame


def frames_of(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rstrip().rpartition(" ")
    return stack.split(";"), int(count)


def summarize(raw: Path, top: int = 25) -> None:
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    layers: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        if not line.strip():
            continue
        frames, count = frames_of(line)
        inside = next((n for n, f in enumerate(frames) if "handle_request" in f), None)
        if inside is None:
            continue
        frames = frames[inside:]
        total += count
        for frame in set(frames):
            inclusive[frame] += count
        own[frames[-1]] += count
        for layer in layers_of(frames):
            layers[layer] += count
    if not total:
        raise SystemExit("no sample fell inside a request")
    print(f"{total} samples inside requests")
    print("\nlayers (inclusive shares):")
    for name in layer_names():
        print(f"  {layers[name] / total * 100:5.1f}%  {name}")
    print(f"\ntop {top} by inclusive share:")
    for frame, count in inclusive.most_common(top):
        print(f"  {count / total * 100:5.1f}%  {frame}")
    print(f"\ntop {top} by own share:")
    for frame, count in own.most_common(top):
        print(f"  {count / total * 100:5.1f}%  {frame}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gil", action="store_true")
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--path", default="/api/v1/entries")
    parser.add_argument("--summarize", type=Path, help="only summarize an earlier raw file")
    args = parser.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    env = bench_environment()
    manage(env, "migrate", "--noinput", "-v", "0")
    token = manage(env, "issue_token", f"spy-{uuid.uuid4().hex[:8]}").strip().splitlines()[-1]
    process, base = start_server(env)
    raw = ROOT / "var" / f"spy-post-{'gil' if args.gil else 'wall'}.txt"
    try:
        script = (
            plain_script("POST") if args.path == CEILING
            else new_post_script(token, mcp=args.path == "/mcp")
        )
        warm(base + args.path, script)
        spy = subprocess.Popen([
            str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(process.pid),
            "--subprocesses", "--format", "raw", "--nolineno",
            "--rate", "200", "--duration", str(args.seconds), "--output", str(raw),
            *(["--gil"] if args.gil else ["--idle"]),
        ], stdout=subprocess.DEVNULL)
        result = run_wrk(base + args.path, script, seconds=args.seconds)
        spy.wait(60)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
    print(f"{args.path}: {result['rps']:.0f} req/s under py-spy, p50 "
          f"{result['p50'] / 1000:.1f} ms, 5xx {result['fivexx']} "
          f"({'GIL held' if args.gil else 'wall'})")
    summarize(raw)


if __name__ == "__main__":
    main()
