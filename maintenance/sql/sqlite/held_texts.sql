-- Deleted entries whose text and actor a hold kept, now that no hold covers their
-- thread, as ../postgresql/held_texts.sql says. SQLite matches a partial index by the
-- form of its condition, and with no statistics for an empty partial index (ANALYZE
-- writes no row for it) its planner takes a larger index the query also implies: the
-- index is named.
SELECT id FROM board_entry INDEXED BY entry_deleted_text_kept
WHERE deleted_at IS NOT NULL AND NOT (body = '') AND {thread_not_held}
ORDER BY id LIMIT {limit}
