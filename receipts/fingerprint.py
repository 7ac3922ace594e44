"""Digests that let a retry be compared without keeping the request's text.

The text they digest arrives normalized (board/entries/fields.py `Text.read`: Unicode NFC
and `\\n` line endings), so a client that resends the "same" text through another stack
(CRLF, decomposed accents) is still recognised as the same request.
"""

import functools
import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass


def field_digests(fields: Mapping[str, object]) -> dict[str, str]:
    """One digest per top-level field, so a conflict can name the fields that differ: the
    first 32 hex digits of the SHA-256 of the field's canonical JSON."""
    digests = {}
    for name, value in fields.items():
        canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digests[name] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]
    return digests


def differing_fields(saved: Mapping[str, str], incoming: Mapping[str, str]) -> list[str]:
    names = saved.keys() | incoming.keys()
    return sorted(name for name in names if saved.get(name) != incoming.get(name))


@dataclass(frozen=True)
class Identity:
    """What a receipt is for: one `request_id` of one operation in one scope."""

    scope: str
    operation: str
    request_id: uuid.UUID

    @functools.cached_property
    def key(self) -> uuid.UUID:
        """The 16-byte digest of the identity: a tombstone's key and an attempt's link."""
        material = f"{self.scope}\x00{self.operation}\x00{self.request_id}".encode()
        return uuid.UUID(bytes=hashlib.sha256(material).digest()[:16])


# Identity.key in SQL (PostgreSQL), of the receipt's columns `scope`, `operation` and
# `request_id`: the purge makes tombstones from the rows its DELETE returns, so the
# identity never travels to Python (maintenance/tombstones/postgresql.py). SQLite has no
# sha256 and computes Identity.key. tests/receipts/test_tombstone_rules.py compares the two.
IDENTITY_KEY_SQL = (
    "encode(substring(sha256("
    "convert_to(scope, 'UTF8') || '\\x00'::bytea"
    " || convert_to(operation, 'UTF8') || '\\x00'::bytea"
    " || convert_to(request_id::text, 'UTF8')"
    ") FROM 1 FOR 16), 'hex')::uuid"
)
