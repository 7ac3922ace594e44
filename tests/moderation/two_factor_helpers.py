"""Codes as an authenticator app computes them (RFC 6238, 30 s, 6 digits)."""

import time
from base64 import b32decode

from django_otp.oath import TOTP


def code_for(secret_base32: str, *, steps_ahead: int = 0) -> str:
    """The app's code now, or `steps_ahead` steps later (the server allows one step of
    drift, so the next step's code is a fresh code that is valid now)."""
    totp = TOTP(b32decode(secret_base32), step=30, digits=6)
    totp.time = time.time() + 30 * steps_ahead
    return f"{totp.token():06d}"


def wrong_code(secret_base32: str) -> str:
    valid = {code_for(secret_base32, steps_ahead=n) for n in (-1, 0, 1, 2)}
    return next(c for c in ("000000", "111111", "222222", "333333", "444444") if c not in valid)
