"""The write path over real HTTP: gunicorn (2 sync workers) driven by `wrk` from another
process, 32 connections, 10 seconds a case. Run with `make bench` (DATABASE_URL selects
PostgreSQL; SQLite by default, in its own file `var/bench.sqlite3`).

Every ratio is against the ceiling measured in the same run: `POST /api/v1/request-ids`
without a token touches no database, so it is what this stack (gunicorn, Django, ninja,
the middleware) costs on its own on this machine at this moment. It is measured first
and last (10 s each), and for 3 s just before each case: on a shared machine the load
drifts within a run, so the `bench:` line puts each case against the ceiling measured
just before it, and the line above it against the higher of the first and last.

Beside it runs a peer, the plainest Django + django-ninja project (tests/bench/plain/: no
middleware, no auth, one table) under the same gunicorn settings, on the same database
(on SQLite its own file, `var/bench-plain.sqlite3`): `GET /api/ping` without the database
and `POST /api/insert` of one row, measured just after the first ceiling. A second peer,
tests/bench/receipt_peer/, is what an operator would otherwise write for safe posts: the
seed article's receipt pattern done plainly in the ORM (on SQLite its own file,
`var/bench-peer.sqlite3`); its new posts and replays are measured beside Settle's.

`wrk` is C: at these rates it uses a small fraction of one core (its CPU time per case
is printed), so the client is not what limits a case. On Debian: `apt-get install wrk`.

Cases: ceiling, new authenticated questions (a fresh request_id each), replays of saved
questions, new questions over MCP `post_entry`, a 64-way storm on ONE request_id (one
entry, no 5xx), and a page of 50 replies. Then one line:
`bench: new/ceiling=R replay/ceiling=R mcp/http=R storm_entries=N p99/p50=R
new/plain_insert=R replay/plain_insert=R ceiling/plain_ping=R new/peer_new=R
replay/peer_replay=R` (p99/p50 the worst of Settle's cases; ceiling/plain_ping with the
ceiling measured just before the ping).

On PostgreSQL every case runs a second time through PgBouncer (the shipped
deploy/pgbouncer/pgbouncer.ini, transaction mode, started on a port of its own, with
SETTLE_DB_PREPARED_STATEMENTS=false as docs/pgbouncer.md says for Debian's 1.18), Settle and the
peer alike; BENCH_PGBOUNCER=0 leaves it out. The run ends with a table of the ratios
against issue 18's targets, one column per database path.
"""

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
DURATION = int(os.environ.get("BENCH_SECONDS", "10"))
PAIR_SECONDS = 3
# BENCH_ENDPOINTS=2 registers that many webhook endpoints first, so every new post also
# writes its outbox rows and queues its send message (issue 9 asks the ratios to hold so).
# No worker runs: the bench measures the post, not the deliveries.
ENDPOINTS = int(os.environ.get("BENCH_ENDPOINTS", "0"))
CONNECTIONS = 32
WORKERS = 2

# Every thread's counts are gathered in `done`; one JSON line is all the parent reads.
LUA_COMMON = r"""
local threads = {}
local counter = 1
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end
fivexx = 0
other = 0
function response(status, headers, body)
  if status >= 500 then fivexx = fivexx + 1
  elseif status >= 300 then other = other + 1 end
end
function done(summary, latency, requests)
  local f, o = 0, 0
  for _, t in ipairs(threads) do
    f = f + t:get("fivexx")
    o = o + t:get("other")
  end
  io.write(string.format(
    "RESULT {\"requests\": %d, \"seconds\": %f, \"p50\": %d, \"p99\": %d, " ..
    "\"fivexx\": %d, \"other\": %d, \"socket_errors\": %d}\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50),
    latency:percentile(99), f, o,
    summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout))
end
"""

LUA_FRESH_UUID = r"""
local function uuid4()
  local t = {}
  for i = 1, 16 do t[i] = math.random(0, 255) end
  t[7] = 64 + (t[7] % 16)
  t[9] = 128 + (t[9] % 64)
  return string.format(
    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
    unpack(t))
end
function init(args)
  math.randomseed(os.time() * 1000 + id * 7919 + math.floor(os.clock() * 1e6))
end
"""


def lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid Lua string literal here


def question_payload(request_id: str, n: int = 0) -> dict:
    return {
        "request_id": request_id,
        "type": "question",
        "title": f"Bench question {n}",
        "body": "Does a safe post cost what an unsafe one does?",
        "actor": {"name": "bench", "model": "wrk", "trigger": "make bench"},
        "submission_mode": "autonomous",
    }


def new_post_script(token: str, *, mcp: bool) -> str:
    # The body is assembled around a fresh UUID per request.
    template = json.dumps(question_payload("RID"))
    if mcp:
        arguments = question_payload("RID")
        template = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "post_entry", "arguments": arguments},
        })
    before, after = template.split("RID")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    if mcp:
        headers.update({"Accept": "application/json", "MCP-Protocol-Version": "2025-06-18"})
    header_lua = "\n".join(
        f"wrk.headers[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items()
    )
    return LUA_COMMON + LUA_FRESH_UUID + f"""
wrk.method = "POST"
{header_lua}
local before, after = {lua_string(before)}, {lua_string(after)}
function request()
  return wrk.format(nil, nil, nil, before .. uuid4() .. after)
end
"""


def fixed_bodies_script(token: str | None, bodies: list[str], method: str = "POST") -> str:
    items = ",\n".join(lua_string(body) for body in bodies)
    auth = f'wrk.headers["Authorization"] = {lua_string("Bearer " + token)}' if token else ""
    return LUA_COMMON + f"""
wrk.method = {lua_string(method)}
wrk.headers["Content-Type"] = "application/json"
{auth}
local bodies = {{
{items}
}}
local i = 0
function init(args) i = id * 7 end
function request()
  i = i + 1
  return wrk.format(nil, nil, nil, bodies[(i % #bodies) + 1])
end
"""


def plain_script(method: str, token: str | None = None) -> str:
    auth = f'wrk.headers["Authorization"] = {lua_string("Bearer " + token)}' if token else ""
    return LUA_COMMON + f'wrk.method = {lua_string(method)}\n{auth}\n'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_environment() -> dict:
    env = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-only-" + "x" * 40,
        # Limits out of the way: the bench measures the write path, not the refusal.
        "SETTLE_SOURCE_HOURLY_LIMIT": str(10**9),
        "SETTLE_OVERALL_HOURLY_LIMIT": str(10**9),
    }
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = f"sqlite:///{ROOT / 'var' / 'bench.sqlite3'}"
    if ENDPOINTS:
        env.setdefault("SETTLE_PUBLIC_URL", "http://127.0.0.1:8000")
    return env


def peer_environment(env: dict, peer: str) -> dict:
    """A peer's: Settle's database (on SQLite a file of its own), its own settings."""
    settings = {"plain": "tests.bench.plain.settings",
                "peer": "tests.bench.receipt_peer.settings"}[peer]
    own = {**env, "DJANGO_SETTINGS_MODULE": settings}
    if not env["DATABASE_URL"].startswith("postgres"):
        own["DATABASE_URL"] = f"sqlite:///{ROOT / 'var' / f'bench-{peer}.sqlite3'}"
    subprocess.run([sys.executable, "-m", "django", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=own, capture_output=True, check=True)
    return own


def peer_token(peer_env: dict) -> str:
    """A bearer token in the receipt peer's tokens table, stored as its SHA-256."""
    token = uuid.uuid4().hex
    subprocess.run(
        [sys.executable, "-m", "django", "shell", "-c",
         "import hashlib; from tests.bench.receipt_peer.models import Token; "
         f"Token.objects.create(digest=hashlib.sha256(b'{token}').hexdigest(), "
         "principal='bench')"],
        cwd=ROOT, env=peer_env, capture_output=True, check=True,
    )
    return token


def endpoints_add(env: dict, count: int) -> None:
    """Enabled endpoints named bench-*; earlier runs' ones are disabled first."""
    listed = [json.loads(line) for line in manage(env, "endpoint", "list", "--json").splitlines()
              if line.startswith("{")]
    for endpoint in listed:
        if endpoint["enabled"]:
            manage(env, "endpoint", "disable", endpoint["name"])
    for n in range(count):
        manage(env, "endpoint", "add", f"bench-{uuid.uuid4().hex[:8]}-{n}",
               "http://127.0.0.1:9/settle", "--supports", "dedupe",
               "--allow-private", "--reason", "benchmark: nothing listens, no worker runs")


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env,
        capture_output=True, text=True, check=True,
    )
    return done.stdout


def start_server(
    env: dict, app: str = "board.wsgi", probe: str = "/api/v1/threads",
    log_name: str = "bench-gunicorn.log",
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(ROOT / "var" / log_name, "w")  # noqa: SIM115 (lives with the server)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "--workers", str(WORKERS),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "--backlog", "2048"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + probe, timeout=5)
            return process, base
        except urllib.error.HTTPError:
            return process, base
        except OSError:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    raise SystemExit(f"gunicorn did not start; see var/{log_name}")


def post_json(url: str, payload: dict, token: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def run_wrk(
    url: str, script: str, *, connections: int = CONNECTIONS, seconds: int = DURATION
) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy, by_process = machine_busy_seconds(), cpu_by_process()
    try:
        done = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s",
             "-s", handle.name, url],
            capture_output=True, text=True, check=True,
        )
    finally:
        os.unlink(handle.name)
    busy = machine_busy_seconds() - busy
    by_process = {
        name: seconds - by_process.get(name, 0.0) for name, seconds in cpu_by_process().items()
    }
    drain(url)
    match = re.search(r"^RESULT (.*)$", done.stdout, re.MULTILINE)
    if match is None:
        raise SystemExit("wrk printed no result:\n" + done.stdout + done.stderr)
    result = json.loads(match.group(1))
    now_used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (now_used.ru_utime - used.ru_utime) + (now_used.ru_stime - used.ru_stime)
    result["client_cpu"] = cpu / result["seconds"]
    result["rps"] = result["requests"] / result["seconds"]
    result["machine_ms"] = busy * 1000 / max(result["requests"], 1)
    result["process_ms"] = {
        name: seconds * 1000 / max(result["requests"], 1) for name, seconds in by_process.items()
    }
    return result


_PROCESS_KINDS = {"postgres": "database", "pgbouncer": "pooler"}


def cpu_by_process() -> dict[str, float]:
    """CPU seconds so far of the processes alive now, by kind: the database server's,
    PgBouncer's, and the rest (the gunicorn workers, above all; wrk ends before the
    second reading, so its time is the `wrk cpu` column)."""
    seconds: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat_path.read_text()
        except OSError:  # the process ended meanwhile
            continue
        name, rest = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
        kind = _PROCESS_KINDS.get(name, "app and the rest")
        seconds[kind] = seconds.get(kind, 0.0) + (int(rest[11]) + int(rest[12])) / tick
    return seconds


def by_kind(result: dict) -> str:
    shares = sorted(result["process_ms"].items(), key=lambda item: -item[1])
    return ", ".join(f"{name} {ms:.2f}" for name, ms in shares if ms >= 0.01)


def machine_busy_seconds() -> float:
    """CPU time the whole machine spent busy so far (every core, /proc/stat): per
    request, what one request cost the server, its database and wrk together."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def drain(url: str) -> None:
    """Wait until the server has worked off what wrk left queued when it stopped: one
    request, sent last, is answered only after everything queued before it. Without this
    the next case measures the previous one's backlog. (The plain peer answers it 404:
    as good.)"""
    base = url.split("/", 3)[:3]
    request = urllib.request.Request("/".join(base) + "/api/v1/request-ids", method="POST")
    try:
        urllib.request.urlopen(request, timeout=120).read()
    except OSError:
        pass


def warm(url: str, script: str) -> None:
    # A second of traffic first, so every worker has imported, connected and compiled.
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        subprocess.run(["wrk", "-t1", "-c4", "-d1s", "-s", handle.name, url],
                       capture_output=True, check=False)
        drain(url)
    finally:
        os.unlink(handle.name)


def count_entries_with(env: dict, request_id: str) -> int:
    return int(manage(
        env, "shell", "-c",
        "from receipts.models import Receipt; from board.models import Entry;"
        f"ids = Receipt.objects.filter(request_id='{request_id}').values_list('result_id', "
        "flat=True); print(Entry.objects.filter(pk__in=list(ids)).count())",
    ).strip().splitlines()[-1])


def run_leg(env: dict, leg: str) -> dict:
    """Every case against one database path; returns the `bench:` line's ratios."""
    manage(env, "migrate", "--noinput", "-v", "0")
    token = manage(env, "issue_token", f"bench-{uuid.uuid4().hex[:8]}").strip().splitlines()[-1]
    endpoints_add(env, ENDPOINTS)
    plain_env = peer_environment(env, "plain")
    receipt_env = peer_environment(env, "peer")
    receipt_token = peer_token(receipt_env)

    process, base = start_server(env)
    servers = [process]
    try:
        # The peer idles while Settle's cases run (a sync worker sleeps in accept).
        plain_process, plain_base = start_server(
            plain_env, "tests.bench.plain.wsgi", "/api/ping", "bench-plain-gunicorn.log"
        )
        servers.append(plain_process)
        receipt_process, receipt_base = start_server(
            receipt_env, "tests.bench.receipt_peer.wsgi", "/api/entries",
            "bench-peer-gunicorn.log",
        )
        servers.append(receipt_process)
        rows = []

        ceiling_script = plain_script("POST")

        def case(
            name: str, path: str, script: str, connections: int = CONNECTIONS,
            paired: bool = True, server: str = base,
        ) -> dict:
            paired_ceiling = None
            if paired:
                # The load of this shared machine drifts within a run: each case is also
                # put against a ceiling measured just before it.
                paired_ceiling = run_wrk(
                    base + "/api/v1/request-ids", ceiling_script, seconds=PAIR_SECONDS
                )["rps"]
            warm(server + path, script)
            result = run_wrk(server + path, script, connections=connections)
            result["name"] = name
            result["paired_ceiling"] = paired_ceiling
            rows.append(result)
            pair = f"  (ceiling just before: {paired_ceiling:.0f})" if paired else ""
            print(
                f"  {name:<26} {result['rps']:8.0f} req/s  p50 {result['p50'] / 1000:7.1f} ms"
                f"  p99 {result['p99'] / 1000:7.1f} ms  5xx {result['fivexx']}"
                f"  other {result['other']}  sockerr {result['socket_errors']}"
                f"  wrk cpu {result['client_cpu'] * 100:3.0f}%"
                f"  machine cpu {result['machine_ms']:.2f} ms/req"
                f" ({by_kind(result)}){pair}",
                flush=True,
            )
            return result

        # Fixtures for the replay and read cases, made through the API itself.
        saved = []
        for n in range(200):
            payload = question_payload(str(uuid.uuid4()), n)
            status, _ = post_json(base + "/api/v1/entries", payload, token)
            assert status == 201, status
            saved.append(json.dumps(payload))
            status, _ = post_json(receipt_base + "/api/entries", payload, receipt_token)
            assert status == 201, status
        status, thread = post_json(
            base + "/api/v1/entries", question_payload(str(uuid.uuid4())), token
        )
        for n in range(50):
            reply = question_payload(str(uuid.uuid4()), n)
            del reply["title"]
            reply.update(type="reply", parent_id=thread["id"])
            assert post_json(base + "/api/v1/entries", reply, token)[0] == 201
        storm_id = str(uuid.uuid4())
        storm_body = json.dumps(question_payload(storm_id))

        print(f"[{leg}] gunicorn {WORKERS} workers, wrk {CONNECTIONS} connections, "
              f"{DURATION} s a case, {ENDPOINTS} webhook endpoints", flush=True)
        before = case("ceiling before", "/api/v1/request-ids", ceiling_script, paired=False)
        plain_ping = case("plain_ping", "/api/ping", plain_script("GET"), paired=False,
                          server=plain_base)
        plain_body = json.dumps({"name": "bench", "body": "One row, nothing else."})
        plain_insert = case("plain_insert", "/api/insert",
                            fixed_bodies_script(None, [plain_body]), paired=False,
                            server=plain_base)
        peer_new = case("peer new post", "/api/entries",
                        new_post_script(receipt_token, mcp=False), paired=False,
                        server=receipt_base)
        peer_replay = case("peer replay", "/api/entries",
                           fixed_bodies_script(receipt_token, saved), paired=False,
                           server=receipt_base)
        new = case("new post", "/api/v1/entries", new_post_script(token, mcp=False))
        replay = case("replay", "/api/v1/entries", fixed_bodies_script(token, saved))
        mcp = case("new post over MCP", "/mcp", new_post_script(token, mcp=True))
        storm = case("storm (64, one key)", "/api/v1/entries",
                     fixed_bodies_script(token, [storm_body]), connections=64)
        page = case("replies page (50)", f"/api/v1/threads/{thread['id']}/replies",
                    plain_script("GET"))
        after = case("ceiling after", "/api/v1/request-ids", ceiling_script, paired=False)
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(10)

    ceiling = max(before["rps"], after["rps"])
    storm_entries = count_entries_with(env, storm_id)
    measured = [r for r in rows if not r["name"].startswith(("plain", "peer"))]
    worst = max(r["p99"] / max(r["p50"], 1) for r in measured)
    failures = sum(r["fivexx"] for r in rows)
    client = max(r["client_cpu"] for r in rows)
    print(f"  wrk used at most {client * 100:.0f}% of one core; 5xx in all: {failures}")
    print(
        f"  against the higher of the first and last ceiling ({ceiling:.0f}):"
        f" new {new['rps'] / ceiling:.2f}, replay {replay['rps'] / ceiling:.2f}"
    )
    print(
        f"  against the plain peer: new/plain_insert {new['rps'] / plain_insert['rps']:.2f},"
        f" replay/plain_insert {replay['rps'] / plain_insert['rps']:.2f},"
        f" ceiling/plain_ping {ceiling / plain_ping['rps']:.2f} (the higher ceiling)"
    )
    print(
        f"  against the receipt peer: new/peer_new {new['rps'] / peer_new['rps']:.2f},"
        f" replay/peer_replay {replay['rps'] / peer_replay['rps']:.2f}"
    )
    # What the targets leave a post, in machine CPU (what this saturated machine spends
    # per request is what bounds its rate): a new post at 1.0 x the plain insert may cost
    # what the insert costs; beyond Settle's own no-database request, that is the budget.
    print(
        f"  machine cpu per request: ceiling {before['machine_ms']:.2f} ms,"
        f" plain_insert {plain_insert['machine_ms']:.2f}, new post {new['machine_ms']:.2f},"
        f" replay {replay['machine_ms']:.2f}; beyond the ceiling: plain_insert"
        f" {plain_insert['machine_ms'] - before['machine_ms']:+.2f}, new post"
        f" {new['machine_ms'] - before['machine_ms']:+.2f},"
        f" replay {replay['machine_ms'] - before['machine_ms']:+.2f}"
    )
    ratios = {
        "new/ceiling": new["rps"] / new["paired_ceiling"],
        "replay/ceiling": replay["rps"] / replay["paired_ceiling"],
        "mcp/http": mcp["rps"] / new["rps"],
        "storm_entries": storm_entries,
        "p99/p50": worst,
        "new/plain_insert": new["rps"] / plain_insert["rps"],
        "replay/plain_insert": replay["rps"] / plain_insert["rps"],
        "ceiling/plain_ping": before["rps"] / plain_ping["rps"],
        "new/peer_new": new["rps"] / peer_new["rps"],
        "replay/peer_replay": replay["rps"] / peer_replay["rps"],
        "5xx": failures,
    }
    print(
        f"bench{'' if leg in ('sqlite', 'postgresql') else f' ({leg})'}:"
        f" new/ceiling={ratios['new/ceiling']:.2f}"
        f" replay/ceiling={ratios['replay/ceiling']:.2f}"
        f" mcp/http={ratios['mcp/http']:.2f} storm_entries={storm_entries}"
        f" p99/p50={worst:.1f}"
        f" new/plain_insert={ratios['new/plain_insert']:.2f}"
        f" replay/plain_insert={ratios['replay/plain_insert']:.2f}"
        f" ceiling/plain_ping={ratios['ceiling/plain_ping']:.2f}"
        f" new/peer_new={ratios['new/peer_new']:.2f}"
        f" replay/peer_replay={ratios['replay/peer_replay']:.2f}",
        flush=True,
    )
    del storm, page
    return ratios


# --- Through PgBouncer ---------------------------------------------------------------------

PGBOUNCER = Path(os.environ.get("BENCH_PGBOUNCER_BIN", "/usr/sbin/pgbouncer"))
# BENCH_PGBOUNCER_PREPARED=1: a PgBouncer of 1.21 or later (BENCH_PGBOUNCER_BIN) keeping
# prepared statements (`max_prepared_statements`), with Settle's left on, as docs/pgbouncer.md
# "What to set" says for such a PgBouncer. Debian 12's 1.18 cannot.
PGBOUNCER_PREPARED = os.environ.get("BENCH_PGBOUNCER_PREPARED", "0") == "1"


@contextlib.contextmanager
def through_pgbouncer(env: dict) -> Iterator[dict]:
    """The shipped deploy/pgbouncer/pgbouncer.ini (transaction mode) in front of the
    database DATABASE_URL names, on a port of its own; yields the environment that
    reaches the database through it, as docs/pgbouncer.md "What to set" says to set it."""
    url = urlsplit(env["DATABASE_URL"])
    folder = Path(tempfile.mkdtemp(prefix="settle-bench-pgbouncer-"))
    port = free_port()
    (folder / "userlist.txt").write_text(f'"{url.username or "postgres"}" ""\n')
    config = (ROOT / "deploy" / "pgbouncer" / "pgbouncer.ini").read_text()
    for name, value in {
        "listen_port": str(port), "logfile": str(folder / "pgbouncer.log"),
        "pidfile": str(folder / "pgbouncer.pid"), "auth_file": str(folder / "userlist.txt"),
    }.items():
        config = re.sub(rf"^{name} = .*$", f"{name} = {value}", config, flags=re.MULTILINE)
    config = re.sub(r"^\* = .*$", f"* = host={url.hostname or '127.0.0.1'} "
                    f"port={url.port or 5432}", config, flags=re.MULTILINE)
    if PGBOUNCER_PREPARED:
        config += "max_prepared_statements = 200\n"
    (folder / "pgbouncer.ini").write_text(config)
    as_postgres = ["-u", "postgres"] if os.geteuid() == 0 else []  # it refuses root
    if as_postgres:
        shutil.chown(folder, "postgres")
    subprocess.run([str(PGBOUNCER), "-d", *as_postgres, str(folder / "pgbouncer.ini")],
                   check=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        netloc = url.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{port}"
        pooled = urlunsplit(url._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2
                                         else host))
        prepared = "true" if PGBOUNCER_PREPARED else "false"
        yield {**env, "DATABASE_URL": pooled, "SETTLE_DB_PREPARED_STATEMENTS": prepared}
    finally:
        pid = (folder / "pgbouncer.pid").read_text().strip()
        os.kill(int(pid), signal.SIGTERM)
        time.sleep(0.5)
        shutil.rmtree(folder, ignore_errors=True)


# --- The run ---------------------------------------------------------------------------

# The targets, by ratio and engine: (at least, at most); (None, None) is reported only.
TARGETS = {
    "new/peer_new": {"postgresql": (1.5, None), "sqlite": (None, None)},
    "replay/peer_replay": {"postgresql": (1.5, None), "sqlite": (None, None)},
    "new/plain_insert": {"postgresql": (0.7, None), "sqlite": (1.0, None)},
    "replay/plain_insert": {"postgresql": (1.0, None), "sqlite": (1.2, None)},
    "ceiling/plain_ping": {"postgresql": (0.7, None), "sqlite": (0.7, None)},
    "mcp/http": {"postgresql": (0.9, None), "sqlite": (0.9, None)},
    "p99/p50": {"postgresql": (None, 4.0), "sqlite": (None, 4.0)},
    "new/ceiling": {"postgresql": (0.25, None), "sqlite": (0.25, None)},
    "replay/ceiling": {"postgresql": (0.35, None), "sqlite": (0.35, None)},
    "storm_entries": {"postgresql": (1, 1), "sqlite": (1, 1)},
    "5xx": {"postgresql": (None, 0), "sqlite": (None, 0)},
}


def target_text(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return "reported"
    if low is not None and low == high:
        return f"= {low}"
    return f">= {low}" if low is not None else f"<= {high}"


def print_table(engine: str, legs: dict[str, dict]) -> None:
    print(f"\n| ratio | target | {' | '.join(legs)} |")
    print(f"|---|---|{'---|' * len(legs)}")
    for name, by_engine in TARGETS.items():
        low, high = by_engine[engine]
        cells = []
        for ratios in legs.values():
            value = ratios[name]
            met = (low is None or value >= low) and (high is None or value <= high)
            text = f"{value}" if isinstance(value, int) else f"{value:.2f}"
            cells.append(text if met else f"**{text}** (missed)")
        print(f"| {name} | {target_text(low, high)} | {' | '.join(cells)} |")


def main() -> None:
    if shutil.which("wrk") is None:
        raise SystemExit(
            "make bench needs wrk (a C HTTP load generator). On Debian or Ubuntu: "
            "sudo apt-get install wrk"
        )
    env = bench_environment()
    engine = "postgresql" if env["DATABASE_URL"].startswith("postgres") else "sqlite"
    legs = {engine: run_leg(env, engine)}
    # On PostgreSQL the same cases again through PgBouncer (BENCH_PGBOUNCER=0 skips it),
    # Settle and the peer alike, so both pay the pooler's hop.
    if engine == "postgresql" and os.environ.get("BENCH_PGBOUNCER", "1") != "0":
        if PGBOUNCER.exists():
            leg = "postgresql via PgBouncer" + (" (prepared)" if PGBOUNCER_PREPARED else "")
            with through_pgbouncer(env) as pooled:
                legs[leg] = run_leg(pooled, leg)
        else:
            print(f"(no PgBouncer leg: {PGBOUNCER} is missing; apt-get install pgbouncer)")
    print_table(engine, legs)


if __name__ == "__main__":
    main()
