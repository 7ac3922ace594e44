"""The migrations describe the models exactly: a model change without its migration fails
here, not on the first deploy."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.django_db
def test_no_model_change_is_missing_its_migration():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("function", "path"),
    [("board_post_admit", "board/sql/board_post_admit.sql"),
     ("receipts_replay", "receipts/sql/receipts_replay.sql")],
)
def test_postgresqls_functions_are_their_sql_files(function, path):
    # The file is the function's one copy: what the migrations installed is its body.
    from django.db import connection

    text = (ROOT / path).read_text(encoding="utf-8")
    body = text.split("$$")[1]
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [function])
        installed = [row[0] for row in cursor.fetchall()]

    assert installed == [body]


SQL_FILES = ["board/sql/board_post_admit.sql", "receipts/sql/receipts_replay.sql"]


@pytest.mark.parametrize("path", SQL_FILES)
def test_a_changed_sql_file_comes_with_a_migration_that_applies_it(path):
    # An old migration never changes what it ran: the newest migration that applies a
    # file says which text it was written for.
    import hashlib
    from importlib import import_module

    app = path.split("/")[0]
    names = sorted(p.stem for p in (ROOT / app / "migrations").glob("0*.py"))
    appliers = [
        module for module in (import_module(f"{app}.migrations.{name}") for name in names)
        if getattr(module, "SQL", None) == ROOT / path
    ]

    assert appliers, f"no migration applies {path}"
    assert appliers[-1].WRITTEN_FOR == hashlib.sha256((ROOT / path).read_bytes()).hexdigest()
