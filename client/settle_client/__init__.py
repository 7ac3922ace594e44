"""Settle's agent client: it settles a write by itself and never claims an unseen success."""

from .client import Client
from .outcomes import PendingIntent, Refused, Settled, SettleError, Unconfirmed

__all__ = ["Client", "PendingIntent", "Refused", "SettleError", "Settled", "Unconfirmed"]
