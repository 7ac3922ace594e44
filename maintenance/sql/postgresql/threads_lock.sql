-- Of these questions, those no hold covers, locked: the question row stands for its
-- thread, and a run that cannot lock it leaves the thread to the run that holds it. A
-- held thread is left out by the database, an anti-join read afresh each batch, so a
-- hold committed between two batches is honoured by the second: the slot
-- thread_not_held is the holds' rule (board.retention.holds.thread_not_held_sql) of
-- the thread board_entry.id, written once for every statement that honours holds.
SELECT id FROM board_entry
WHERE id = ANY(%(ids)s::bigint[]) AND type = 'question' AND {thread_not_held}
FOR UPDATE SKIP LOCKED
