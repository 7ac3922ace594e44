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
