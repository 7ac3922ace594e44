"""Opaque keyset cursors for the public lists.

A cursor names the last id a page ended on; the next page continues strictly after it
(below it for newest-first threads, above it for oldest-first replies), so entries added
meanwhile never shift or repeat what a reader already saw.
"""

import base64
import binascii
import json

from board.exceptions import BadRequest


def encode_cursor(after_id: int) -> str:
    raw = json.dumps({"after": after_id}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        after_id = data["after"]
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeEncodeError):
        raise BadRequest("the cursor is not one this server made") from None
    if isinstance(after_id, bool) or not isinstance(after_id, int) or after_id < 0:
        raise BadRequest("the cursor is not one this server made")
    return after_id


def bookmark_cursor(reply_id: int) -> str:
    """A replies cursor whose page starts with this reply."""
    return encode_cursor(reply_id - 1)
