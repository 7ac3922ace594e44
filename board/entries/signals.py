"""What the board tells the apps to its right, without importing them.

Dependencies point one way (receipts <- board <- maintenance <- moderation), yet
`maintenance` must write its outbox rows inside the entry's own transaction. The board
asks for them with `entry_companions` and sends the deletions' signals inside their
transactions; receivers connect in their app's `ready()`.
"""

from django.dispatch import Signal

# Sent as a new entry is about to be written (a 201, never a replay), before its
# transaction: each receiver returns a `receipts.services.Companion`, rows written with
# the entry in its transaction (in the entry's own statement on PostgreSQL), or None. This
# is how the outbox's deliveries commit with their entry. Keyword arguments: `now`.
entry_companions = Signal()

# Sent inside the transaction that deletes an entry, after it is blanked and its receipt
# marked deleted. Keyword arguments: `entry`, `now`.
entry_deleted = Signal()

# The same, for a batch of entries deleted in one transaction (an erasure, SPEC 8.4).
# Keyword arguments: `entry_ids`, `now`.
entries_deleted = Signal()
