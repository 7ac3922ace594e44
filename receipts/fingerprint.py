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

# The packed form a receipt keeps (`packed_digests`): a version byte, the digest of the
# whole request, then a short tag a field. Receipts made before it keep 16 bytes a field
# and no version byte (`per_field_packed`); their length is a multiple of 16, which this
# form's never is (1 + 16 + 4 a field is odd), so the length tells the two apart
# whatever their first byte happens to be.
PACKED_VERSION = 1
# 128 bits decide replay or conflict, as the JSON form's 32 hex digits and the per-field
# form's 16 bytes did.
REQUEST_DIGEST_SIZE = 16
# Only names the fields of a conflict: 32 bits, the first 4 bytes of the per-field digest.
FIELD_TAG_SIZE = 4
# The per-field form's digest of each field.
PER_FIELD_DIGEST_SIZE = 16
# What a replay compares of a versioned packed form: its version byte and the request's
# digest.
_DECIDING = 1 + REQUEST_DIGEST_SIZE


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


def _field_digest(name: str, value: object) -> bytes:
    """The SHA-256 of a field's name, a NUL and its canonical JSON: a digest that says
    which field it is of without the name being kept."""
    return hashlib.sha256(name.encode("utf-8") + b"\x00" + _canonical(value)).digest()


def per_field_packed(fields: Mapping[str, object]) -> bytes:
    """The per-field digests in 16 bytes a field, in the order of the fields' names
    (`_field_digest`): the form receipts kept from receipts migration 0008 to 0010, no
    version byte. Still compared for their retries until they expire."""
    return b"".join(
        _field_digest(name, fields[name])[:PER_FIELD_DIGEST_SIZE] for name in sorted(fields)
    )


def packed_digests(fields: Mapping[str, object]) -> bytes:
    """The request's digests as a new receipt keeps them: the version byte
    (`PACKED_VERSION`); the first 16 bytes of the SHA-256 of the whole request's
    canonical JSON (every field with its name, in the names' order), which alone decides
    whether a retry is the same request; then a 4-byte tag a field in the order of the
    fields' names, the first bytes of its per-field digest (`_field_digest`), which only
    names the fields of a conflict. 41 bytes for a post's six fields, where 16 bytes a
    field took 96 and the JSON form about 300: less WAL on every new post."""
    return bytes([PACKED_VERSION]) + b"".join([
        hashlib.sha256(_canonical(dict(fields))).digest()[:REQUEST_DIGEST_SIZE],
        *(_field_digest(name, fields[name])[:FIELD_TAG_SIZE] for name in sorted(fields)),
    ])


def packed_is_per_field(saved: bytes) -> bool:
    """Whether a receipt's packed digests are the per-field form made before the
    versioned one (`per_field_packed`), told by its length (see `PACKED_VERSION`)."""
    return len(saved) % PER_FIELD_DIGEST_SIZE == 0


def packed_same_request(saved: bytes, fields: Mapping[str, object]) -> bool:
    """Whether a receipt's packed digests, in whichever form it keeps them, are of the
    same request as `fields`. PostgreSQL's replay judges the same in SQL
    (receipts/sql/receipts_replay.sql); tests/receipts/test_rules.py compares the two."""
    if packed_is_per_field(saved):
        return saved == per_field_packed(fields)
    # The version byte is compared too: a form of another version is never the same.
    return saved[:_DECIDING] == packed_digests(fields)[:_DECIDING]


def differing_fields(saved: Mapping[str, str], incoming: Mapping[str, str]) -> list[str]:
    names = saved.keys() | incoming.keys()
    return sorted(name for name in names if saved.get(name) != incoming.get(name))


def differing_packed(saved: bytes, fields: Mapping[str, object]) -> list[str]:
    """The fields of a request whose tags (on a receipt made before the versioned form,
    whose 16-byte digests) a receipt's packed digests do not hold. A receipt keeps no
    names: a field it has and the request lacks cannot be named, which never happens
    while an operation's fields stay the same (they are all sent, empty ones as null)."""
    per_field = packed_is_per_field(saved)
    if per_field:
        size, start, mine = PER_FIELD_DIGEST_SIZE, 0, per_field_packed(fields)
    else:
        size, start, mine = FIELD_TAG_SIZE, _DECIDING, packed_digests(fields)
    kept = {saved[at:at + size] for at in range(start, len(saved), size)}
    changed = [
        name for index, name in enumerate(sorted(fields))
        if mine[start + index * size:start + (index + 1) * size] not in kept
    ]
    if not changed and not per_field and not packed_same_request(saved, fields):
        # The request's digest differs but every tag matches: a changed field's 32-bit
        # tag collided with the field's kept one (2^-32 a changed field), or the receipt
        # has a field the request lacks. A conflict must name something, so it names
        # every field rather than none. (A receipt of 16 bytes a field is answered as it
        # was when it was made.)
        return sorted(fields)
    return changed


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
