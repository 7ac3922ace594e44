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

# The bytes a packed digest keeps of each field: 128 bits, as the JSON form's 32 hex digits.
PACKED_DIGEST_SIZE = 16


def _canonical(value: object) -> bytes:
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")


def field_digests(fields: Mapping[str, object]) -> dict[str, str]:
    """One digest per top-level field, so a conflict can name the fields that differ: the
    first 32 hex digits of the SHA-256 of the field's canonical JSON. The form receipts
    kept before `packed_digests`; still compared for their retries."""
    return {
        name: hashlib.sha256(_canonical(value)).hexdigest()[:32]
        for name, value in fields.items()
    }


def packed_digests(fields: Mapping[str, object]) -> bytes:
    """The same per-field digests in 16 bytes a field, in the order of the fields' names:
    each the first 16 bytes of the SHA-256 of the field's name, a NUL and its canonical
    JSON, so a digest says which field it is of without the name being kept. About 100
    bytes on a receipt where the JSON form took 300 (the WAL of every new post)."""
    return b"".join(
        hashlib.sha256(name.encode("utf-8") + b"\x00" + _canonical(fields[name]))
        .digest()[:PACKED_DIGEST_SIZE]
        for name in sorted(fields)
    )


def differing_fields(saved: Mapping[str, str], incoming: Mapping[str, str]) -> list[str]:
    names = saved.keys() | incoming.keys()
    return sorted(name for name in names if saved.get(name) != incoming.get(name))


def differing_packed(saved: bytes, fields: Mapping[str, object]) -> list[str]:
    """The fields of a request whose digests a receipt's packed digests do not hold. A
    receipt keeps no names: a field it has and the request lacks is not named, which
    never happens while an operation's fields stay the same (they are all sent, empty
    ones as null)."""
    kept = {
        saved[start:start + PACKED_DIGEST_SIZE]
        for start in range(0, len(saved), PACKED_DIGEST_SIZE)
    }
    mine = packed_digests(fields)
    return [
        name for index, name in enumerate(sorted(fields))
        if mine[index * PACKED_DIGEST_SIZE:(index + 1) * PACKED_DIGEST_SIZE] not in kept
    ]


@dataclass(frozen=True)
class Identity:
    """What a receipt is for: one `request_id` of one operation in one scope."""

    scope: str
    operation: str
    request_id: uuid.UUID

    @functools.cached_property
    def key(self) -> uuid.UUID:
        """The 16-byte digest of the identity: a tombstone's key and an attempt's link.
        PostgreSQL's purge computes it in SQL too, from the rows its DELETE returns
        (maintenance/tombstones/sql/postgresql/entomb.sql); SQLite has no sha256.
        tests/receipts/test_tombstone_rules.py compares the two."""
        material = f"{self.scope}\x00{self.operation}\x00{self.request_id}".encode()
        return uuid.UUID(bytes=hashlib.sha256(material).digest()[:16])
