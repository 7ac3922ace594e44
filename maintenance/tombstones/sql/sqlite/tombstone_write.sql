-- One tombstone, written over a stale one of the same identity (expired, not yet
-- purged, then the id was used again). Made in Python (purge.ReceiptRow.tombstone):
-- SQLite has no sha256. Run once a row as one prepared statement: bulk_create compiled
-- every row into SQL, two thirds of a 1,000-receipt batch.
INSERT INTO receipts_tombstone (key, reason, expires_at)
VALUES (%(key)s, %(reason)s, %(expires_at)s)
ON CONFLICT (key) DO UPDATE SET reason = excluded.reason, expires_at = excluded.expires_at
