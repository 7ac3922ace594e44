"""How many project functions one new post runs, and how often it moves between apps.

`python tests/bench/trace_post.py [--route api|mcp]` traces one new authenticated post
(through Django's test client, the whole WSGI stack) with `sys.setprofile`, on SQLite
(var/trace.sqlite3, made here; TRACE_DATABASE_URL picks another database). Printed:

* **functions**: distinct project functions (code objects under board/, receipts/,
  maintenance/, moderation/) that were called, by module;
* **moves**: calls from a function of one app into a function of another, each call
  counted (the caller is the nearest project frame up the stack), by pair of apps;
* **switches**: in the order the calls happen, how often the next project function
  called belongs to another app than the one before it (returns are not counted).

Serving code is left out: the middleware, logs, metrics, health, environment, checks,
static files, origins and the PostgreSQL backend (board/serving/, or the flat modules of
board/ they came from), any app's middleware (a class named `...Middleware`, such as the
console's session middleware), and the project wiring (settings, urls, wsgi, celery).
Twenty posts first warm the imports, the connection and the caches, so the trace is of a
steady post.
"""

import json
import os
import sys
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DATABASE_URL"] = os.environ.get(
    "TRACE_DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'trace.sqlite3'}"
)
os.environ.pop("CELERY_BROKER_URL", None)
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "trace-only-" + "x" * 40)
os.environ["SETTLE_SOURCE_HOURLY_LIMIT"] = os.environ["SETTLE_OVERALL_HOURLY_LIMIT"] = "1000000000"
os.environ["ALLOWED_HOSTS"] = "testserver"  # the test client's host
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
(ROOT / "var").mkdir(exist_ok=True)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from moderation import actions as moderation  # noqa: E402
from tests.bench.http_bench import question_payload  # noqa: E402

APPS = ("board", "receipts", "maintenance", "moderation")
SERVING = {"board/settings.py", "board/urls.py", "board/wsgi.py", "board/celery.py"}
SERVING_FOLDERS = ("board/serving/",)


def project_place(filename: str) -> tuple[str, str] | None:
    """(app, module path) for a function of the project outside serving code, else None."""
    try:
        relative = Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    app = relative.split("/", 1)[0]
    if app not in APPS or relative in SERVING or relative.startswith(SERVING_FOLDERS):
        return None
    return app, relative


class Trace:
    def __init__(self) -> None:
        self.functions: set[tuple[str, str]] = set()
        self.moves: Counter[tuple[str, str]] = Counter()
        self.switches = 0
        self.last_app: str | None = None
        self.places: dict[str, tuple[str, str] | None] = {}

    def place(self, code) -> tuple[str, str] | None:
        filename = code.co_filename
        if filename not in self.places:
            self.places[filename] = project_place(filename)
        if "Middleware" in code.co_qualname.split(".", 1)[0]:
            return None  # serving: a middleware wraps every request, posts or not
        return self.places[filename]

    def __call__(self, frame, event: str, arg) -> None:
        if event != "call":
            return
        here = self.place(frame.f_code)
        if here is None:
            return
        self.functions.add((here[1], frame.f_code.co_qualname))
        if self.last_app is not None and self.last_app != here[0]:
            self.switches += 1
        self.last_app = here[0]
        caller = frame.f_back
        while caller is not None and self.place(caller.f_code) is None:
            caller = caller.f_back
        if caller is not None:
            there = self.place(caller.f_code)
            if there[0] != here[0]:
                self.moves[(there[0], here[0])] += 1


def post_once(client: Client, route: str) -> None:
    request_id = str(uuid.uuid4())
    if route == "api":
        response = client.post(
            "/api/v1/entries", json.dumps(question_payload(request_id)),
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
        return
    from tests.board.mcp_support import modern_call

    response = modern_call(client, "post_entry", question_payload(request_id))
    assert response.status_code == 200, response.content
    assert response.json()["result"]["structuredContent"]["http_status"] == 201, response.content


def main() -> None:
    route = sys.argv[sys.argv.index("--route") + 1] if "--route" in sys.argv else "api"
    call_command("migrate", verbosity=0)
    _, token = moderation.token_issue(actor="trace", name=f"trace-{uuid.uuid4().hex[:8]}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    for _ in range(20):
        post_once(client, route)
    trace = Trace()
    sys.setprofile(trace)
    try:
        post_once(client, route)
    finally:
        sys.setprofile(None)

    from django.db import connection

    by_module = Counter(module for module, _ in trace.functions)
    moves = sum(trace.moves.values())
    print(f"one new authenticated {route} post on {connection.vendor}, serving code left out")
    print(f"functions: {len(trace.functions)} distinct, in {len(by_module)} modules")
    for module, count in sorted(by_module.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:3d}  {module}")
    print(f"moves between apps: {moves}")
    for (caller, callee), count in trace.moves.most_common():
        print(f"  {count:3d}  {caller} -> {callee}")
    print(f"switches between apps, in call order: {trace.switches}")
    if "-v" in sys.argv:
        for module, name in sorted(trace.functions):
            print(f"  {module}:{name}")


if __name__ == "__main__":
    main()
