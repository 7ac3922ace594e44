"""Benchmarks: `*_bench.py` files, run by `make bench` (pytest tests/bench), skipped by a
plain `make test` so the suite stays fast."""

from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent


def pytest_collect_file(file_path, parent):
    if file_path.name.endswith("_bench.py"):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config, items):
    asked = any(
        BENCH_DIR == Path(arg.split("::")[0]).resolve()
        or BENCH_DIR in Path(arg.split("::")[0]).resolve().parents
        for arg in config.args
    )
    if asked:
        return
    skip = pytest.mark.skip(reason="a benchmark: run it with make bench")
    for item in items:
        if Path(str(item.fspath)).resolve().parent == BENCH_DIR:
            item.add_marker(skip)
