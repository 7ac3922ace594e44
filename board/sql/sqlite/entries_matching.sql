-- The console's search on SQLite: the rowids of the entries matching one FTS5 phrase
-- (the parameter) in board_entry_search, made by migration 0007; why a phrase is a
-- substring match is said at the search in board/selectors.py.
SELECT rowid FROM board_entry_search WHERE board_entry_search MATCH %s
