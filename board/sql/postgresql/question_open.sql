-- Step 6 as the write's guard (board/posting/engines/postgresql.py `question_open`; an
-- SQL boolean expression the receipts engine folds into the write, receipts/sql/
-- postgresql/write.sql): a reply's parent is a public question whose receipt has not
-- expired. SQLite's guard asks the same through the ORM (board/posting/engines/
-- sqlite.py); tests/board/test_rules.py compares the two on generated input.
--
-- The question is held with FOR KEY SHARE (replies do not block each other) until the
-- reply commits: the retention purge claims a thread by locking its question (FOR
-- UPDATE SKIP LOCKED), so a purge that comes second leaves the thread alone, and one
-- that came first makes the reply wait and find the question gone (422). Without it, a
-- reply accepted just before its question's expiry could fail its foreign key at
-- COMMIT: an `unknown` outcome.
--
-- Parameters, in order: the parent's id, the question type, the operation that made
-- the question, the parent's id three times again, the succeeded state, and now.
EXISTS (
    SELECT 1 FROM board_entry
    WHERE id = %s AND type = %s AND visible AND deleted_at IS NULL
    FOR KEY SHARE
) AND EXISTS (
    SELECT 1 FROM receipts_receipt
    -- The question's receipt: its id is the question's (the primary key), or, made
    -- before ids were shared, found by receipt_result_id_older, whose predicate the
    -- second arm repeats.
    WHERE operation = %s AND (id = %s AND result_id = %s OR result_id = %s AND result_id <> id)
        AND state = %s AND receipt_expires_at > %s
)
