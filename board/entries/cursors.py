"""Opaque keyset cursors for the public lists.

A cursor names the last id a page ended on; the next page continues strictly after it
(below it for newest-first threads, above it for oldest-first replies), so entries added
meanwhile never shift or repeat what a reader already saw.
"""

import base64
import binascii
import json

from pydantic import BaseModel, ConfigDict, NonNegativeInt, ValidationError

from board.exceptions import BadRequest

# Every cursor encode_cursor makes, and nothing else, as the OpenAPI document states it
# (decode_cursor reads a cursor without it): base64url
# without padding of `{"after":N}`. The 9 bytes `{"after":` are "eyJhZnRlciI6"; then each
# three ASCII digits are four characters from fixed sets (a digit is 0x30-0x39, so its
# bits are 0011dddd), and the end, `}` (0x7D), closes the last group in one of three ways
# depending on how many digits it shares it with. A number other than 0 has no leading
# zero (a first group "MD..." would start with the digit 0). Checked both ways, every id
# to the pattern and every match back to an id, by tests/board/test_openapi.py.
_DIGIT_PAIR = "(?:[MN][DTjz]|O[DT])"  # one digit's first 12 bits
_FIRST_DIGIT_PAIR = "(?:M[Tjz]|N[DTjz]|O[DT])"  # the same, digits 1-9
_SECOND_DIGIT = "[AEIMQUYcgk]"
_THIRD_DIGIT = "[w-z0-5]"
_LAST_DIGIT_AND_END = "[BFJNRVZdhl]9"  # a group "DD}" after its first digit's pair
_ONE_DIGIT_AND_END = "(?:[MN][HXn3]|O[HX])0"  # a group "D}"
_NONZERO_DIGIT_AND_END = "(?:M[Xn3]|N[HXn3]|O[HX])0"  # a group "D}", D not 0
_END = "fQ"  # a group "}"
_DIGIT_GROUP = f"{_DIGIT_PAIR}{_SECOND_DIGIT}{_THIRD_DIGIT}"  # three digits
_SHORT_END = f"{_END}|{_ONE_DIGIT_AND_END}"  # none or one digit, then "}"
# At most 19 digits, as many as an id (a bigint) has: 100 and up is a first group of
# three digits, then up to four more groups and an end of up to two digits (3 to 17
# digits in all), or five more groups and an end of up to one (18 or 19).
_CURSOR_TEXT = (
    "eyJhZnRlciI6(?:"
    "MH0"  # 0
    f"|{_NONZERO_DIGIT_AND_END}"  # 1-9
    f"|{_FIRST_DIGIT_PAIR}{_LAST_DIGIT_AND_END}"  # 10-99
    f"|{_FIRST_DIGIT_PAIR}{_SECOND_DIGIT}{_THIRD_DIGIT}"  # 100 and up
    f"(?:(?:{_DIGIT_GROUP}){{0,4}}(?:{_SHORT_END}|{_DIGIT_PAIR}{_LAST_DIGIT_AND_END})"
    f"|(?:{_DIGIT_GROUP}){{5}}(?:{_SHORT_END}))"
    ")"
)
CURSOR_PATTERN = f"^{_CURSOR_TEXT}$"
# The lists read an empty `?cursor=` as no cursor: the first page.
CURSOR_OR_EMPTY_PATTERN = f"^(?:{_CURSOR_TEXT})?$"

# The longest cursor: `{"after":` and 19 digits and `}`, 29 bytes, in base64.
CURSOR_MAX_LENGTH = 39



class _Cursor(BaseModel):
    """What a cursor holds: `{"after": N}`, N an id (0 and up)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    after: NonNegativeInt


def encode_cursor(after_id: int) -> str:
    raw = json.dumps({"after": after_id}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The id a cursor names, if it is exactly one encode_cursor made; else 400.

    The length goes first, so a cursor costs nothing past its bound, and holds at most 29
    bytes: no JSON deep enough to cost anything, no number of more than 19 digits (int()
    of thousands of digits raised a ValueError past 4,300, a 500). base64 decoding skips
    stray characters and JSON allows spaces and other spellings of a number, so the
    cursor is made again from the id and must be the one given."""
    if not isinstance(cursor, str) or len(cursor) > CURSOR_MAX_LENGTH:
        raise _bad_cursor()
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii") + b"=" * (-len(cursor) % 4))
        after = _Cursor.model_validate_json(raw).after
    except (UnicodeEncodeError, binascii.Error, ValueError, ValidationError):
        raise _bad_cursor() from None
    if encode_cursor(after) != cursor:
        raise _bad_cursor()
    return after


def _bad_cursor() -> BadRequest:
    return BadRequest("the cursor is not one this server made")


def bookmark_cursor(reply_id: int) -> str:
    """A replies cursor whose page starts with this reply."""
    return encode_cursor(reply_id - 1)
