"""The arrows of SPEC 1 and the house's layout, read from the code: each app imports only
the apps to its left (receipts <- board <- maintenance <- moderation), and only the doors
(board/http, board/mcp, and board/urls.py, which routes to them) import the doors. The
domain takes what the doors read as typed values (board/entries/)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ["receipts", "board", "maintenance", "moderation"]
DOORS = ("board.http", "board.mcp")


def imported(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(app: str) -> list[Path]:
    return [path for path in sorted((ROOT / app).rglob("*.py")) if "migrations" not in path.parts]


def is_in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("app", APPS)
def test_an_app_imports_none_to_its_right(app):
    right = APPS[APPS.index(app) + 1:]
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in modules(app)
        for name in imported(path)
        if any(is_in(name, other) for other in right)
    }

    assert wrong == set()


def test_only_the_doors_import_the_doors():
    doors = [ROOT / "board" / "http", ROOT / "board" / "mcp", ROOT / "board" / "urls.py"]
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for app in APPS
        for path in modules(app)
        if not any(path == door or door in path.parents for door in doors)
        for name in imported(path)
        if any(is_in(name, door) for door in DOORS)
    }

    assert wrong == set()


@pytest.mark.parametrize("route", ["api", "mcp"])
def test_a_new_post_switches_apps_at_most_four_times(route, tmp_path):
    # A steady new post, traced by tests/bench/trace_post.py in a process of its own: its
    # path goes board > maintenance > board > receipts > board, one visit to each app.
    import os
    import re
    import subprocess
    import sys

    env = {**os.environ, "TRACE_DATABASE_URL": f"sqlite:///{tmp_path / 'trace.sqlite3'}"}
    traced = subprocess.run(
        [sys.executable, "tests/bench/trace_post.py", "--route", route],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )

    assert traced.returncode == 0, traced.stderr[-2000:]
    switches = re.search(r"switches between apps, in call order: (\d+)", traced.stdout)
    assert switches and int(switches.group(1)) <= 4, traced.stdout
