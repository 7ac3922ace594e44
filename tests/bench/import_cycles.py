"""The project's import graph, and the cycles in it.

Run: `.venv/bin/python tests/bench/import_cycles.py [package ...]` (default: the four
apps). Reads every module's `import` statements with `ast`, those inside functions (the
late imports) included, so a cycle broken only by importing late still counts. Prints
each strongly connected group of more than one module; exits 1 when there is one.
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("board", "receipts", "maintenance", "moderation")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules `name` imports (`from a import b` counts `a.b` when it is one)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {target for target in targets if target in known and target != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def main(packages: tuple[str, ...]) -> int:
    modules = project_modules(packages)
    known = set(modules)
    graph = {name: imports_of(path, name, known) for name, path in modules.items()}
    # A package's __init__ is imported with any of its modules; that edge is not a cycle.
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    found = cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    print(f"{len(modules)} modules, {edges} imports between them, {len(found)} cycles")
    for group in found:
        print("  cycle:", " <-> ".join(group))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:]) or APPS))
