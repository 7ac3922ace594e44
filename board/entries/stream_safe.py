"""Unicode's Stream-Safe Text Format (UAX #15, section 13), checked in linear time.

Normalizing text costs time proportional to its length times its longest run of
non-starters (characters whose canonical combining class is not 0): canonical reordering
sorts each run, and CPython sorts it by insertion. One letter followed by 127,000
combining marks of alternating classes took 16 seconds to NFC. A text is stream-safe when
its NFKD holds no run of more than 30 non-starters; such a text normalizes in time
proportional to its length, so Settle refuses any other before normalizing it (SPEC 11.6).

The check follows UAX #15's Stream-Safe Text Process (D4) without producing anything: a
character's NFKD decomposition has leading and trailing non-starters, and a character
decomposing to non-starters only extends the run it continues. The process would insert a
COMBINING GRAPHEME JOINER where a run passes 30; a text it would leave unchanged is
stream-safe. Only the few thousand characters that have a decomposition are looked up and
remembered; every other character is a starter or a non-starter by its combining class.
"""

import unicodedata

MAX_NON_STARTERS = 30

# A character's NFKD as (leading non-starters, trailing non-starters, length): a
# decomposition of non-starters only has leading == length.
Shape = tuple[int, int, int]
_STARTER: Shape = (0, 0, 1)
_NON_STARTER: Shape = (1, 1, 1)
# Filled as characters are met; bounded by the characters Unicode gives a decomposition.
_DECOMPOSED: dict[str, Shape] = {}


def is_stream_safe(text: str) -> bool:
    """Whether `text` is in Stream-Safe Text Format: no more than 30 non-starters in a row
    once decomposed (NFKD). Linear in the length of `text`."""
    if text.isascii():  # ASCII holds no non-starter and no decomposition
        return True
    run = 0
    for char in text:
        if char < "\xa0":  # ASCII and C1 controls: starters, no decomposition
            run = 0
            continue
        leading, trailing, length = _DECOMPOSED.get(char) or _shape(char)
        if run + leading > MAX_NON_STARTERS:
            return False
        run = run + length if leading == length else trailing
    return True


def _shape(char: str) -> Shape:
    # Hangul syllables decompose by algorithm (decomposition() is empty for them) into
    # conjoining jamo, all starters: the same shape as a starter without decomposition.
    if not unicodedata.decomposition(char):
        return _NON_STARTER if unicodedata.combining(char) else _STARTER
    decomposed = unicodedata.normalize("NFKD", char)
    starters = [not unicodedata.combining(part) for part in decomposed]
    if True in starters:
        leading = starters.index(True)
        trailing = starters[::-1].index(True)
    else:
        leading = trailing = len(decomposed)
    shape = _DECOMPOSED[char] = (leading, trailing, len(decomposed))
    return shape
