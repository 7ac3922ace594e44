-- The outbox: one accepted delivery per enabled endpoint, as ../postgresql/outbox_rows.sql
-- says; the receipts engine writes them right after the entry, in its transaction.
-- A new delivery's id, a time-ordered (version 7) UUID in the form SQLite keeps it: the
-- 32 hex digits of Django's UUIDField, the moment's 12 first, then the version, random
-- digits and the variant digit.
SELECT lower(printf('%%012x', %s) || '7' || substr(hex(randomblob(2)), 2) || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(8)), 2)), id, %s, 0, %s, %s, '', %s, %s, %s FROM maintenance_endpoint WHERE enabled = %s
