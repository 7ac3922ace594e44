-- An entry's principal exists (PostgreSQL): what the foreign key from board_entry to
-- board_principal checked, without its lock. The foreign key checked each new entry by
-- locking the principal's row FOR KEY SHARE, so that no one could delete the principal
-- before the entry committed; that lock is written into the principal's row, so into the
-- WAL: 54 bytes every new post (docs/write-path.md). Principals are never deleted, nor
-- their ids changed (SPEC 4; board/sql/board_principal_kept.sql refuses both), so a
-- principal seen here stays: a plain read is enough, and writes nothing.
--
-- An entry naming no principal is refused with SQLSTATE 23503 (foreign_key_violation),
-- as the foreign key refused it (Django raises IntegrityError), at the statement rather
-- than at the commit: nothing inserts an entry before its principal. SQLite keeps its
-- real foreign key (board/migrations/0010_entry_principal_checked_without_lock.py).
--
-- Applied by version (receipts/function_file.py): a comment is edited freely; a change to
-- the code raises the version below and comes with a new migration of the board that
-- applies it. The statements are safe to run again (OR REPLACE).
-- version: 1

CREATE OR REPLACE FUNCTION board_entry_principal_exists() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    -- A snapshot of its own (a volatile function's statement, read committed): a
    -- principal committed by another transaction before this entry is seen.
    PERFORM FROM board_principal WHERE id = NEW.principal_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING
            ERRCODE = 'foreign_key_violation',
            MESSAGE = format('board_entry.principal_id %s names no principal',
                             NEW.principal_id),
            TABLE = 'board_entry', COLUMN = 'principal_id';
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER board_entry_principal_exists
    BEFORE INSERT ON board_entry
    FOR EACH ROW WHEN (NEW.principal_id IS NOT NULL)
    EXECUTE FUNCTION board_entry_principal_exists();

CREATE OR REPLACE TRIGGER board_entry_principal_changed
    BEFORE UPDATE OF principal_id ON board_entry
    FOR EACH ROW WHEN (NEW.principal_id IS NOT NULL
                       AND NEW.principal_id IS DISTINCT FROM OLD.principal_id)
    EXECUTE FUNCTION board_entry_principal_exists();
