"""Where one post spends its time: cProfile over N posts through the WSGI stack.

`python tests/bench/profile_post.py [N] [--replays | --plain]` on the configured
database (DATABASE_URL, else var/bench.sqlite3, or var/bench-plain.sqlite3 for the
peer), making its tables first. Prints the functions with the most cumulative and own
time, per post, then, on SQLite, the time spent inside the `sqlite3` module's own C
calls (execute, fetch, commit): what SQLite itself costs a request, Python left out.

- no flag: N new questions, a fresh request_id each;
- `--replays`: N retries of one saved question (each one a replay);
- `--plain`: N inserts of the plain peer `make bench` measures against
  (tests/bench/plain/: one row, no middleware).
"""

import argparse
import cProfile
import json
import os
import pstats
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

parser = argparse.ArgumentParser()
parser.add_argument("rounds", nargs="?", type=int, default=300)
kind = parser.add_mutually_exclusive_group()
kind.add_argument("--replays", action="store_true")
kind.add_argument("--plain", action="store_true")
ARGS = parser.parse_args()

if ARGS.plain:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench-plain.sqlite3'}")
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.bench.plain.settings"
else:
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "profile-only-" + "x" * 40)
os.environ["SETTLE_SOURCE_HOURLY_LIMIT"] = os.environ["SETTLE_OVERALL_HOURLY_LIMIT"] = "1000000000"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from tests.bench.http_bench import question_payload  # noqa: E402


def poster():
    """The request to profile, as a function of no arguments."""
    if ARGS.plain:
        client = Client(HTTP_HOST="127.0.0.1")
        body = json.dumps({"name": "bench", "body": "One row, nothing else."})
        return lambda: client.post("/api/insert", body, content_type="application/json"), 201
    from moderation import actions as moderation  # noqa: PLC0415 (Settle's apps only)

    _, token = moderation.token_issue(actor="profile", name=f"profile-{uuid.uuid4().hex[:8]}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_HOST="127.0.0.1")
    if ARGS.replays:
        body = json.dumps(question_payload(str(uuid.uuid4())))
        client.post("/api/v1/entries", body, content_type="application/json")
        return lambda: client.post("/api/v1/entries", body, content_type="application/json"), 200
    return (
        lambda: client.post(
            "/api/v1/entries", json.dumps(question_payload(str(uuid.uuid4()))),
            content_type="application/json",
        ),
        201,
    )


def main() -> None:
    rounds = ARGS.rounds
    call_command("migrate", verbosity=0)
    send, expected = poster()

    def post() -> None:
        response = send()
        assert response.status_code == expected, response.content

    for _ in range(20):
        post()  # warm: imports, connection, URL resolver
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(rounds):
        post()
    profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt
    print(f"{rounds} requests, {total / rounds * 1000:.2f} ms a request under cProfile")
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)
    sqlite_own = sum(
        own for (path, _, name), (_, _, own, _, _) in stats.stats.items()
        if path == "~" and ("sqlite3" in name or "SQLiteCursorWrapper.execute" in name)
    )
    if sqlite_own:
        print(f"SQLite's own C calls: {sqlite_own / rounds * 1000:.3f} ms a request")


if __name__ == "__main__":
    main()
