-- Deleted entries whose text and actor a hold kept, now that no hold covers their
-- thread (SPEC 8.2: blanked at the first purge after the release), a batch of the limit
-- (a slot, written into the text), locked, skipping those another transaction holds.
-- The condition of the partial index entry_deleted_text_kept as its migration wrote it:
-- otherwise a scan of every deleted entry, a set that grows with the board. The slot
-- thread_not_held is the holds' rule of the thread
-- COALESCE(board_entry.parent_id, board_entry.id), as in threads_lock.sql.
SELECT id FROM board_entry
WHERE deleted_at IS NOT NULL AND NOT (body = '') AND {thread_not_held}
ORDER BY id LIMIT {limit} FOR UPDATE SKIP LOCKED
