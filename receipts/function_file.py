"""SQL kept as `.sql` files (board/sql/, receipts/sql/, ...): statements the engines read
(`statement_file`), and PostgreSQL's functions, applied by migrations by version, for
migrations of every app (receipts imports nothing of the others).

A file says its version in a comment line, `-- version: N`. A migration that applies it
names the function, the version, and the fingerprint of that version's code: the file
with its comments removed (`code_fingerprint`). So a comment is edited freely, without a
migration; a change to the code is a new version, which a new migration applies; and
tests/test_migrations.py holds the newest migration of each file to the file's version
and code.

Applying (`FunctionFile.text_to_apply`), a migration reads the file as it is now:
- its version: the file's text, to execute (and it refuses if the code is not the one
  that version was written with: the file's version was not raised);
- an older version: nothing, when a later migration of the same app applies the file's
  version (a fresh database runs every migration; the newest applies the file); it
  refuses when none does, as it does when the file's version is older than its own or
  missing: the file and the migrations disagree, and applying either would be a guess.
"""

import functools
import hashlib
import importlib
import pkgutil
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_LINE = re.compile(r"^-- version: (\d+)[ \t]*$", re.MULTILINE)


@functools.cache
def statement_file(path: str) -> str:
    """A statement kept in a `.sql` file beside the Python that runs it (e.g.
    "receipts/sql/postgresql/claim.sql"), read once a process, without its comments
    (`code_of`): they are for the reader, and a statement sent on every post would carry
    kilobytes of them to the server (and a `%` or `{` in one would be read as a slot)."""
    return code_of((ROOT / path).read_text(encoding="utf-8"))


class FunctionFileMismatch(Exception):
    pass


def file_version(text):
    found = VERSION_LINE.findall(text)
    return int(found[0]) if len(found) == 1 else None


def code_of(text):
    """The text without its `--` comments (outside quoted strings) and blank lines: what
    PostgreSQL runs. Block comments count as code; a change to one is a new version."""
    kept, quoted, i = [], False, 0
    while i < len(text):
        if not quoted and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end == -1 else end
            continue
        if text[i] == "'":
            quoted = not quoted  # '' inside a string flips twice
        kept.append(text[i])
        i += 1
    lines = (line.rstrip() for line in "".join(kept).splitlines())
    return "\n".join(line for line in lines if line)


def code_fingerprint(text):
    return hashlib.sha256(code_of(text).encode()).hexdigest()


class FunctionFile:
    """One version of a function's file, as a migration applies it."""

    def __init__(self, path, *, version, code):
        self.path = path  # from the project's root, e.g. "receipts/sql/receipts_replay.sql"
        self.version = version
        self.code = code  # code_fingerprint of this version

    @property
    def function(self):
        return Path(self.path).stem  # the file is named after its function

    def text(self):
        return (ROOT / self.path).read_text(encoding="utf-8")

    def text_to_apply(self):
        """The file's text to execute, or None when a later migration applies it."""
        text = self.text()
        found = file_version(text)
        if found == self.version:
            if code_fingerprint(text) != self.code:
                raise FunctionFileMismatch(
                    f"{self.path}: its code is not version {found}'s; give the file a new "
                    f"version and a migration that applies it"
                )
            return text
        if found is not None and found > self.version and self._applied_later(found):
            return None
        raise FunctionFileMismatch(
            f"{self.path} says version {found}, this migration applies version "
            f"{self.version} and no later migration applies version {found}"
        )

    def _applied_later(self, version):
        return any(
            other.version == version for other in migrations_applying(self.path)
        )


def migrations_applying(path):
    """The FunctionFile of each migration of the file's app that applies `path`, oldest
    first (a migration keeps it as FUNCTION_FILE, or several as FUNCTION_FILES)."""
    app = path.split("/")[0]
    package = importlib.import_module(f"{app}.migrations")
    names = sorted(
        name for _, name, _ in pkgutil.iter_modules(package.__path__) if name[0].isdigit()
    )
    modules = (importlib.import_module(f"{app}.migrations.{name}") for name in names)
    files = (
        found
        for module in modules
        for found in (getattr(module, "FUNCTION_FILE", None),
                      *getattr(module, "FUNCTION_FILES", ()))
    )
    return [found for found in files if found is not None and found.path == path]
