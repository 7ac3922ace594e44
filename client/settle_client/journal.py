"""The journal: every intent is committed here before its first byte is sent.

SQLite with synchronous=FULL; the file and its side files are mode 0600 and the folders
0700 whatever the umask. It stores the request_id, the exact body, the base URL and a
sha256 digest of the token, never the token. A claim (owner and lease) keeps an intent
being settled by one thread or process out of another's resume().

`reported` says whether a tool result of `settle-agent mcp` has told the model an intent's
outcome (SPEC 13.1): until one has, a call with the same content is that intent, so a model
retrying after `unconfirmed` or after its host restarted never makes a second entry.
"""

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_PATH = "~/.local/state/settle/journal.sqlite3"
SIDE_SUFFIXES = ("-journal", "-wal", "-shm")

SCHEMA = """
CREATE TABLE IF NOT EXISTS intents (
    base_url TEXT NOT NULL,
    token_digest TEXT NOT NULL,
    request_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    claimed_by TEXT,
    claim_host TEXT,
    claim_pid INTEGER,
    claim_until REAL,
    PRIMARY KEY (base_url, token_digest, request_id)
)
"""

# Columns added since the first schema: a journal file made before them gets each one when
# it is opened (ALTER TABLE under the opening transaction's lock, so two processes opening
# one old file add it once).
ADDED_COLUMNS = {
    "reported": "ALTER TABLE intents ADD COLUMN reported INTEGER NOT NULL DEFAULT 0",
}


def journal_path(journal: str | os.PathLike | None) -> Path:
    """journal= when given, else $SETTLE_JOURNAL, else the default path."""
    chosen = journal or os.environ.get("SETTLE_JOURNAL") or DEFAULT_PATH
    return Path(chosen).expanduser()


def token_digest(token: str | None) -> str:
    """The token's sha256; anonymous is its own scope."""
    if not token:
        return "anonymous"
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Intent:
    request_id: str
    type: str
    body: str
    created_at: str
    state: str
    outcome: dict | None


def _alive(host: str | None, pid: int | None) -> bool:
    if host != socket.gethostname() or not pid:
        return True  # another machine's claim: trust its lease
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Journal:
    def __init__(self, path: str | os.PathLike | None, *, base_url: str, token: str | None):
        self.path = journal_path(path)
        self.base_url = base_url
        self.digest = token_digest(token)
        self._prepare()
        with self._transaction() as db:
            db.execute(SCHEMA)
            present = {row[1] for row in db.execute("PRAGMA table_info(intents)")}
            for column, statement in ADDED_COLUMNS.items():
                if column not in present:
                    db.execute(statement)

    def _prepare(self) -> None:
        missing = []
        folder = self.path.parent
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            folder.mkdir(mode=0o700, exist_ok=True)
            os.chmod(folder, 0o700)
        descriptor = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        os.close(descriptor)
        self._protect()

    def _protect(self) -> None:
        for candidate in [self.path, *(Path(f"{self.path}{s}") for s in SIDE_SUFFIXES)]:
            try:
                os.chmod(candidate, 0o600)
            except FileNotFoundError:
                pass

    class _Tx:
        def __init__(self, journal: "Journal"):
            self.journal = journal

        def __enter__(self) -> sqlite3.Connection:
            self.db = sqlite3.connect(self.journal.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("BEGIN IMMEDIATE")
            self.journal._protect()
            return self.db

        def __exit__(self, kind, value, traceback) -> None:
            try:
                self.db.execute("ROLLBACK" if kind else "COMMIT")
            finally:
                self.db.close()
                self.journal._protect()

    def _transaction(self) -> "_Tx":
        return Journal._Tx(self)

    def _key(self, request_id: str) -> tuple[str, str, str]:
        return (self.base_url, self.digest, request_id)

    @staticmethod
    def owner() -> str:
        return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4()}"

    def begin(self, *, request_id: str, type: str, body: str, owner: str,
              lease: float) -> Intent:
        """Commit the intent (claimed by owner) before anything is sent.

        The same request_id with other content is a ValueError; with the same content the
        stored intent is returned (settled, refused or pending).
        """
        with self._transaction() as db:
            row = db.execute(
                "SELECT type, body, created_at, state, outcome FROM intents"
                " WHERE base_url=? AND token_digest=? AND request_id=?", self._key(request_id),
            ).fetchone()
            if row is None:
                return self._insert(db, request_id, type, body, owner, lease)
            if row[1] != body:
                raise ValueError(
                    f"request_id {request_id} is already journaled with other content"
                )
            if row[3] == "pending":
                self._claim_row(db, request_id, owner, lease)
            return Intent(request_id, row[0], row[1], row[2], row[3],
                          json.loads(row[4]) if row[4] else None)

    def _insert(self, db: sqlite3.Connection, request_id: str, type: str, body: str,
                owner: str, lease: float) -> Intent:
        now = datetime.now(UTC).isoformat()
        db.execute(
            "INSERT INTO intents (base_url, token_digest, request_id, type, body,"
            " created_at, claimed_by, claim_host, claim_pid, claim_until)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*self._key(request_id), type, body, now, owner, socket.gethostname(),
             os.getpid(), time.time() + lease),
        )
        return Intent(request_id, type, body, now, "pending", None)

    def begin_or_join(self, *, request_id: str, type: str, body: str, content: dict,
                      owner: str, lease: float) -> tuple[Intent, bool]:
        """The oldest intent of this URL and token whose outcome no tool result has reported
        and whose content (its body but the request_id) equals `content`, claimed when
        pending, and True; else the new intent (request_id, body), committed, and False.

        One transaction, so two calls with the same content at once join one intent. A
        claim held by another thread or process is taken over: both then send the same id
        and body, which the server saves once.
        """
        with self._transaction() as db:
            rows = db.execute(
                "SELECT request_id, type, body, created_at, state, outcome FROM intents"
                " WHERE base_url=? AND token_digest=? AND type=? AND reported=0"
                " ORDER BY created_at, request_id", (self.base_url, self.digest, type),
            ).fetchall()
            for found, kind, stored, created_at, state, outcome in rows:
                if _content(stored) != content:
                    continue
                if state == "pending":
                    self._claim_row(db, found, owner, lease)
                return Intent(found, kind, stored, created_at, state,
                              json.loads(outcome) if outcome else None), True
            return self._insert(db, request_id, type, body, owner, lease), False

    def mark_reported(self, request_ids: list[str]) -> None:
        """A tool result has told the model these intents' outcomes."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE intents SET reported=1"
                " WHERE base_url=? AND token_digest=? AND request_id=?",
                [self._key(request_id) for request_id in request_ids],
            )

    def _claim_row(self, db: sqlite3.Connection, request_id: str, owner: str,
                   lease: float) -> None:
        db.execute(
            "UPDATE intents SET claimed_by=?, claim_host=?, claim_pid=?, claim_until=?"
            " WHERE base_url=? AND token_digest=? AND request_id=?",
            (owner, socket.gethostname(), os.getpid(), time.time() + lease,
             *self._key(request_id)),
        )

    def claim(self, request_id: str, *, owner: str, lease: float) -> Intent | None:
        """Claim a pending intent nobody else is settling now; None when it is taken."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT type, body, created_at, state, claimed_by, claim_host, claim_pid,"
                " claim_until FROM intents"
                " WHERE base_url=? AND token_digest=? AND request_id=?", self._key(request_id),
            ).fetchone()
            if row is None or row[3] != "pending":
                return None
            held = row[4] is not None and row[4] != owner
            if held and row[7] > time.time() and _alive(row[5], row[6]):
                return None
            self._claim_row(db, request_id, owner, lease)
            return Intent(request_id, row[0], row[1], row[2], "pending", None)

    def release(self, request_id: str, *, owner: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE intents SET claimed_by=NULL, claim_host=NULL, claim_pid=NULL,"
                " claim_until=NULL WHERE base_url=? AND token_digest=? AND request_id=?"
                " AND claimed_by=?", (*self._key(request_id), owner),
            )

    def record(self, request_id: str, *, state: str, outcome: dict) -> None:
        """A settlement or refusal, committed before the call returns."""
        with self._transaction() as db:
            db.execute(
                "UPDATE intents SET state=?, outcome=?, claimed_by=NULL, claim_host=NULL,"
                " claim_pid=NULL, claim_until=NULL"
                " WHERE base_url=? AND token_digest=? AND request_id=?",
                (state, json.dumps(outcome), *self._key(request_id)),
            )

    def pending(self) -> list[Intent]:
        with self._transaction() as db:
            rows = db.execute(
                "SELECT request_id, type, body, created_at FROM intents WHERE base_url=?"
                " AND token_digest=? AND state='pending' ORDER BY created_at, request_id",
                (self.base_url, self.digest),
            ).fetchall()
        return [Intent(r[0], r[1], r[2], r[3], "pending", None) for r in rows]


def _content(body: str) -> dict | None:
    """What an intent asks for: its body without the request_id."""
    try:
        fields = json.loads(body)
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    fields.pop("request_id", None)
    return fields
