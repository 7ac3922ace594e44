"""Where one new post spends its time: cProfile over N posts through the WSGI stack.

`python tests/bench/profile_post.py [N]` on the configured database (DATABASE_URL, else
var/bench.sqlite3), after `make bench` or `manage.py migrate` made its tables. Prints the
functions with the most cumulative and own time, per post.
"""

import cProfile
import json
import os
import pstats
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench.sqlite3'}")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "profile-only-" + "x" * 40)
os.environ["SETTLE_SOURCE_HOURLY_LIMIT"] = os.environ["SETTLE_OVERALL_HOURLY_LIMIT"] = "1000000000"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from moderation import services as moderation  # noqa: E402
from tests.bench.http_bench import question_payload  # noqa: E402


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    call_command("migrate", verbosity=0)
    _, token = moderation.token_issue(actor="profile", name=f"profile-{uuid.uuid4().hex[:8]}")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_HOST="127.0.0.1")

    def post() -> None:
        response = client.post(
            "/api/v1/entries", json.dumps(question_payload(str(uuid.uuid4()))),
            content_type="application/json",
        )
        assert response.status_code == 201, response.content

    for _ in range(20):
        post()  # warm: imports, connection, URL resolver
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(rounds):
        post()
    profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt
    print(f"{rounds} posts, {total / rounds * 1000:.2f} ms a post under cProfile")
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
