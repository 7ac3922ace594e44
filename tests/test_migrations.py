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
     ("receipts_replay", "receipts/sql/receipts_replay.sql"),
     ("board_entry_principal_exists", "board/sql/board_entry_principal_exists.sql"),
     ("board_principal_kept", "board/sql/board_principal_kept.sql")],
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


SQL_FILES = [
    "board/sql/board_post_admit.sql", "receipts/sql/receipts_replay.sql",
    "board/sql/board_entry_principal_exists.sql", "board/sql/board_principal_kept.sql",
]


def newest_migration_of(path):
    from receipts.function_file import migrations_applying

    appliers = migrations_applying(path)
    assert appliers, f"no migration applies {path}"
    return appliers[-1]


@pytest.mark.parametrize("path", SQL_FILES)
def test_the_newest_migration_of_each_sql_file_applies_the_file_as_it_is(path):
    # The migration that applies the file's version is the newest of its app that applies
    # the file, and that version's code is the file's: a deployed database runs it.
    from receipts.function_file import file_version

    text = (ROOT / path).read_text(encoding="utf-8")
    newest = newest_migration_of(path)

    assert file_version(text) == newest.version
    assert newest.text_to_apply() == text
    assert f"FUNCTION {newest.function}(" in text


def edited(path, tmp_path, monkeypatch, edit):
    # The file as someone edited it, where the migrations read it.
    import receipts.function_file

    copy = tmp_path / path
    copy.parent.mkdir(parents=True)
    copy.write_text(edit((ROOT / path).read_text(encoding="utf-8")), encoding="utf-8")
    monkeypatch.setattr(receipts.function_file, "ROOT", tmp_path)
    return copy.read_text(encoding="utf-8")


def with_version(text, version):
    import re

    return re.sub(r"^-- version: \d+$", f"-- version: {version}", text, flags=re.MULTILINE)


@pytest.mark.parametrize("path", SQL_FILES)
def test_a_comment_edited_in_a_sql_file_needs_no_migration(path, tmp_path, monkeypatch):
    text = edited(path, tmp_path, monkeypatch, lambda text: (
        "-- Reworded, and a new line of comment.\n" + text.replace(
            "BEGIN\n", "BEGIN\n    -- a note, with 'quotes' and -- dashes: comment all along\n", 1)
        .replace(" AS $$", " AS $$  -- a trailing comment", 1)
    ))

    assert newest_migration_of(path).text_to_apply() == text


@pytest.mark.parametrize("path", SQL_FILES)
def test_a_code_edit_in_a_sql_file_without_a_new_version_is_refused(
    path, tmp_path, monkeypatch
):
    from receipts.function_file import FunctionFileMismatch

    edited(path, tmp_path, monkeypatch,
           lambda text: text.replace("VOLATILE", "VOLATILE STRICT", 1))

    with pytest.raises(FunctionFileMismatch, match="its code is not version"):
        newest_migration_of(path).text_to_apply()


@pytest.mark.parametrize("path", SQL_FILES)
def test_a_new_version_of_a_sql_file_without_its_migration_is_refused(
    path, tmp_path, monkeypatch
):
    # Every migration of the file refuses, the newest and those it superseded: on a fresh
    # database or a deployed one, `migrate` stops instead of leaving the old function.
    from receipts.function_file import FunctionFileMismatch, migrations_applying

    newest = newest_migration_of(path)
    edited(path, tmp_path, monkeypatch, lambda text: with_version(
        text.replace("VOLATILE", "VOLATILE STRICT", 1), newest.version + 1))

    for applier in migrations_applying(path):
        with pytest.raises(FunctionFileMismatch, match="no later migration applies"):
            applier.text_to_apply()


def test_a_migration_superseded_by_a_later_version_applies_nothing():
    # A fresh database runs receipts 0005 (version 1) before 0008 applies version 2.
    from receipts.function_file import migrations_applying

    first, newest = migrations_applying("receipts/sql/receipts_replay.sql")[:2]

    assert (first.version, newest.version) == (1, 2)
    assert first.text_to_apply() is None


@pytest.mark.parametrize(
    ("one", "other", "same_code"),
    [("SELECT 1; -- it's one", "SELECT 1;\n\n-- one", True),
     ("SELECT '--a'", "SELECT '--b'", False),
     ("SELECT 'it''s -- a'", "SELECT 'it''s -- b'", False)],
)
def test_a_sql_files_code_is_its_text_without_comments(one, other, same_code):
    from receipts.function_file import code_fingerprint

    assert (code_fingerprint(one) == code_fingerprint(other)) is same_code
