"""A post's admission and its statements: who is calling (`callers`), the hourly
`limits`, the write's SQL (`statements`, with each engine's parts in `sql/`) and SQLite's
one writer (`writer_turn`). board.services.entry_post is the one caller."""
