"""The audited actions on who gets in (SPEC 7.1): failed logins and locks as the
throttling reports them, unlocking, and the second factor's confirmation and reset. Each
writes its audit event through moderation.actions.audit_record, in the same transaction."""

from datetime import datetime

from django.db import transaction

from moderation.actions import audit_record
from moderation.models import AuditEvent

# A failed login's author is unknown: the username tried is a detail, not the actor.
LOGIN_ACTOR = "anonymous"
# Enough of a device's id to tell a username's devices apart in the audit log.
DEVICE_SHOWN = 8


def login_failure_record(
    *, username: str, address: str, path: str, refused: bool, stage: str = "password",
    device: str | None = None,
) -> AuditEvent:
    """`device`: the attempt carried the username's device cookie, so it counts against
    that device alone (moderation.access.devices); its id's first characters are named."""
    details = {"username": username, "address": address, "path": path, "stage": stage}
    if device:
        details["device"] = device[:DEVICE_SHOWN]
    if refused:
        details["refused"] = "locked"
    return audit_record(
        actor=LOGIN_ACTOR, action="login_failed", target_type="login", details=details
    )


def login_lock_record(
    *, username: str, address: str, by: list[str], ends_at: datetime | None,
    device: str | None = None,
) -> AuditEvent:
    """A lock starts: `locked_by` says what (`username`, `address`, or `device`: one
    browser holding the username's device cookie, named in `device`)."""
    details = {
        "username": username,
        "address": address,
        "locked_by": ", ".join(by),
        "ends_at": ends_at.isoformat(timespec="seconds") if ends_at else "",
    }
    if device:
        details["device"] = device[:DEVICE_SHOWN]
    return audit_record(
        actor=LOGIN_ACTOR, action="login_locked", target_type="login", details=details
    )


def two_factor_confirm(*, actor: str, device, code: str) -> list[str] | None:
    """Confirm an enrolment (audited); the recovery codes, or None for a wrong code."""
    from moderation.access import two_factor

    with transaction.atomic():
        codes = two_factor.device_confirm(device=device, code=code)
        if codes is not None:
            audit_record(
                actor=actor, action="two_factor_enrolled", target_type="user",
                target_ids=[device.user_id], details={"username": device.user.get_username()},
            )
    return codes


def two_factor_reset(*, actor: str, username: str, reason: str = "") -> int:
    """Remove an account's second factor (its authenticator and recovery codes)."""
    from django.contrib.auth import get_user_model

    from moderation.access import two_factor

    user = get_user_model().objects.get_by_natural_key(username)
    with transaction.atomic():
        removed = two_factor.devices_remove(user=user)
        audit_record(
            actor=actor, action="two_factor_reset", target_type="user", target_ids=[user.pk],
            reason=reason, details={"username": username, "devices_removed": removed},
        )
    return removed
