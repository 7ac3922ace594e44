-- An identity's tombstone in force: its reason, given the identity's key and the day
-- receipts.models.tombstone_today(now) gives (positional parameters, in that order).
--
-- One file for both engines' writes, read after the claim: SQLite's write
-- (receipts/engines/sqlite.py) runs it as a statement of its own; PostgreSQL's places
-- it, as it is, in write.sql's CTE `tomb` (its slot {tombstone_in_force}), so the rule
-- is written once in SQL. The ORM's form of the same rule is
-- receipts.services.tombstones_in_force.
SELECT reason FROM receipts_tombstone WHERE key = %s AND expires_at > %s
