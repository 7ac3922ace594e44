"""Retention policies as data (SPEC 8.1): five durations an administrator keeps, with the
environment as their defaults, and a principal's own entry retention over both.

Where each value is read:
- a post computes `receipt_expires_at` once, at its write, from the principal's own value
  (read with its token, in the statement the post already makes: board/posting/statements.py)
  or else the console's value from this module's per-process cache, refreshed at most
  every `SETTLE_RETENTION_CACHE_SECONDS` (30 s by default), so a change is in force in
  every process within a minute and a post pays no statement for it;
- the purges read the policies afresh at each run (`retention_current(fresh=True)`).

A value that changes never moves a receipt already written: its expiry is a column.
"""

import re
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.signals import setting_changed
from django.db import transaction
from django.dispatch import receiver

from board.models import Principal, RetentionPolicy

ENTRY, DELETION, TOMBSTONE, ATTEMPT, DELIVERY = (
    "entry", "deletion", "tombstone", "attempt", "delivery",
)
POLICIES = (ENTRY, DELETION, TOMBSTONE, ATTEMPT, DELIVERY)

ENVIRONMENT, CONSOLE = "environment", "console"

_HOUR, _DAY = 3600, 86400
# Inclusive bounds in seconds.
BOUNDS = {
    ENTRY: (_HOUR, 3650 * _DAY),
    DELETION: (_HOUR, 3650 * _DAY),
    TOMBSTONE: (_DAY, 3650 * _DAY),
    ATTEMPT: (_HOUR, 365 * _DAY),
    DELIVERY: (_HOUR, 365 * _DAY),
}
_BOUND_WORDS = {
    ENTRY: "1h to 3650d", DELETION: "1h to 3650d", TOMBSTONE: "1d to 3650d",
    ATTEMPT: "1h to 365d", DELIVERY: "1h to 365d",
}
_SETTINGS = {
    ENTRY: "SETTLE_ENTRY_RETENTION",
    DELETION: "SETTLE_DELETION_RETENTION",
    TOMBSTONE: "SETTLE_TOMBSTONE_RETENTION",
    ATTEMPT: "SETTLE_ATTEMPT_RETENTION",
    DELIVERY: "SETTLE_DELIVERY_RETENTION",
}

POLICY_OF_SETTING = {setting: policy for policy, setting in _SETTINGS.items()}


class PolicyRefused(ValueError):
    """A value, policy or principal refused; the message is one line naming the policy.
    It is the command's; `console` says the same in the console's words where the
    command's names a flag."""

    def __init__(self, message: str, *, console: str | None = None) -> None:
        super().__init__(message)
        self.console = console or message


@dataclass(frozen=True)
class InForce:
    seconds: int
    source: str  # ENVIRONMENT or CONSOLE

    @property
    def duration(self) -> timedelta:
        return timedelta(seconds=self.seconds)


def environment_default(policy: str) -> int:
    return int(getattr(settings, _SETTINGS[policy]).total_seconds())


# --- The per-process cache of the policies in force ---------------------------------------

# Every policy as it is in force: the console's value, else the environment's. Loaded at
# most every SETTLE_RETENTION_CACHE_SECONDS, and whenever a retention setting changes
# (tests), so a post reads its entry retention from memory.
_in_force: dict[str, InForce] = {}
_loaded_at: float | None = None


def cache_clear() -> None:
    """Forget the values in force: the next read loads them (a set in this process, tests)."""
    global _loaded_at
    _loaded_at = None


@receiver(setting_changed)
def _retention_setting_changed(setting: str, **_signal) -> None:
    if setting in POLICY_OF_SETTING:
        cache_clear()


def _policies(*, fresh: bool = False) -> dict[str, InForce]:
    global _in_force, _loaded_at
    now = time.monotonic()
    ttl = settings.SETTLE_RETENTION_CACHE_SECONDS
    if fresh or _loaded_at is None or now - _loaded_at >= ttl:
        console = dict(RetentionPolicy.objects.values_list("name", "seconds"))
        _in_force = {}
        for name in POLICIES:
            if name in console:
                _in_force[name] = InForce(seconds=console[name], source=CONSOLE)
            else:
                _in_force[name] = InForce(seconds=environment_default(name), source=ENVIRONMENT)
        _loaded_at = now
    return _in_force


def policy_in_force(policy: str, *, fresh: bool = False) -> InForce:
    """The console's value (cached, unless `fresh`), else the environment's."""
    return _policies(fresh=fresh)[policy]


def retention_current(*, fresh: bool = True) -> dict[str, InForce]:
    return dict(_policies(fresh=fresh))


def entry_retention_for(principal: Principal | None) -> timedelta:
    """The life of a receipt written now for this principal: its own value, else the
    console's (cached), else the environment's. No statement when the cache is warm."""
    if principal is not None and principal.entry_retention is not None:
        return timedelta(seconds=principal.entry_retention)
    return timedelta(seconds=_policies()[ENTRY].seconds)


def entry_overrides() -> dict[str, int]:
    """The principals whose own entry retention wins, by name."""
    rows = Principal.objects.filter(entry_retention__isnull=False).order_by("name")
    return dict(rows.values_list("name", "entry_retention"))


# --- Parsing and changing ------------------------------------------------------------------

# ASCII digits only, as hold ids: `\d` also reads other scripts' digits ("١٢h"). Matched
# whole against the stripped text, so no two runs of white space compete for the same
# characters (that backtracking took seconds on a long line of spaces).
_DURATION = re.compile(r"([0-9]{1,12})\s*([smhd]?)", re.ASCII)
# How much of a refused value a refusal repeats: it stays one short line.
_SHOWN = 40
_UNIT = {"": 1, "s": 1, "m": 60, "h": _HOUR, "d": _DAY}


def policy_check(policy: str) -> str:
    if policy not in POLICIES:
        raise PolicyRefused(f"{policy}: unknown policy (one of {', '.join(POLICIES)})")
    return policy


def duration_parse(policy: str, text: str) -> int:
    """Seconds of `text` (`90s`, `7d`, whole seconds), within the policy's bounds."""
    policy_check(policy)
    match = _DURATION.fullmatch((text or "").strip())
    if not match:
        shown = text if len(text or "") <= _SHOWN else text[:_SHOWN] + "…"
        raise PolicyRefused(
            f"{policy}: {shown!r} is not a duration (whole seconds, or a number with s, m, h, d)"
        )
    seconds = int(match[1]) * _UNIT[match[2]]
    low, high = BOUNDS[policy]
    if not low <= seconds <= high:
        raise PolicyRefused(f"{policy}: {text} is out of bounds ({_BOUND_WORDS[policy]})")
    return seconds


@dataclass(frozen=True)
class Change:
    """A change's value in force before and after, with their sources."""

    policy: str
    principal: str | None
    before: InForce
    after: InForce

    def details(self) -> dict:
        return {
            "policy": self.policy,
            "principal": self.principal,
            "before": {"seconds": self.before.seconds, "source": self.before.source},
            "after": {"seconds": self.after.seconds, "source": self.after.source},
        }


def _principal_locked(policy: str, name: str) -> Principal:
    if policy != ENTRY:
        raise PolicyRefused(
            f"{policy}: --principal applies to the entry policy only",
            console=f"{policy}: an agent's own retention applies to the entry policy only",
        )
    principal = Principal.objects.select_for_update().filter(name=name).first()
    if principal is None:
        raise PolicyRefused(f"{policy}: unknown principal {name!r}")
    return principal


def _principal_in_force(principal: Principal) -> InForce:
    if principal.entry_retention is not None:
        # A principal's own value is set by an administrator: source `console`.
        return InForce(seconds=principal.entry_retention, source=CONSOLE)
    return policy_in_force(ENTRY, fresh=True)


def retention_set(*, policy: str, seconds: int, principal: str | None = None) -> Change:
    """Set a console value (or a principal's own entry retention); call in the caller's
    transaction to audit with it. Bounds are checked here too."""
    policy_check(policy)
    low, high = BOUNDS[policy]
    if not low <= seconds <= high:
        raise PolicyRefused(f"{policy}: {seconds}s is out of bounds ({_BOUND_WORDS[policy]})")
    with transaction.atomic():
        if principal is not None:
            row = _principal_locked(policy, principal)
            before = _principal_in_force(row)
            row.entry_retention = seconds
            row.save(update_fields=["entry_retention"])
            after = InForce(seconds=seconds, source=CONSOLE)
        else:
            before = policy_in_force(policy, fresh=True)
            RetentionPolicy.objects.update_or_create(name=policy, defaults={"seconds": seconds})
            after = InForce(seconds=seconds, source=CONSOLE)
    cache_clear()
    return Change(policy=policy, principal=principal, before=before, after=after)


def retention_clear(*, policy: str, principal: str | None = None) -> Change:
    """Return a policy (or a principal's entry retention) to its default."""
    policy_check(policy)
    with transaction.atomic():
        if principal is not None:
            row = _principal_locked(policy, principal)
            before = _principal_in_force(row)
            row.entry_retention = None
            row.save(update_fields=["entry_retention"])
            after = policy_in_force(ENTRY, fresh=True)
        else:
            before = policy_in_force(policy, fresh=True)
            RetentionPolicy.objects.filter(name=policy).delete()
            after = InForce(seconds=environment_default(policy), source=ENVIRONMENT)
    cache_clear()
    return Change(policy=policy, principal=principal, before=before, after=after)


def duration_words(seconds: int) -> str:
    """`30d`, `12h`, `90s`: the largest unit that divides the value."""
    for unit, size in (("d", _DAY), ("h", _HOUR), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
