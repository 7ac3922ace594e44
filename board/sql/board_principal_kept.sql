-- Principals are kept for good (PostgreSQL): no principal is deleted, nor its id changed.
-- A principal is the identity its receipts replay under (SPEC 4); erasure deletes its
-- entries, not it; the admin is read-only; nothing in Settle deletes one.
--
-- This is what lets board/sql/board_entry_principal_exists.sql check an entry's principal
-- with a plain read instead of the foreign key's FOR KEY SHARE lock (54 bytes of WAL
-- every new post): the lock kept the principal from being deleted between the check and
-- the entry's commit; a principal that can never be deleted needs no such lock. So the
-- refusal is unconditional, even for a principal no entry names: a deletion that first
-- looked for entries could not see an entry not yet committed.
--
-- A deletion or a change of id is refused with SQLSTATE 23001 (restrict_violation;
-- Django raises IntegrityError). TRUNCATE fires no row trigger: it is refused when it
-- leaves an entry naming a principal, as the foreign key refused truncating
-- board_principal without board_entry (Django's test flush truncates both together).
-- An operator who must remove a principal does it by hand, knowingly: its entries first,
-- with `ALTER TABLE board_principal DISABLE TRIGGER board_principal_kept`.
--
-- Applied by version (receipts/function_file.py): a comment is edited freely; a change to
-- the code raises the version below and comes with a new migration of the board that
-- applies it. The statements are safe to run again (OR REPLACE).
-- version: 1

CREATE OR REPLACE FUNCTION board_principal_kept() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        -- After every table of the statement is emptied: board_entry too, when it was one.
        IF EXISTS (SELECT FROM board_entry WHERE principal_id IS NOT NULL) THEN
            RAISE EXCEPTION USING
                ERRCODE = 'restrict_violation',
                MESSAGE = 'board_principal is emptied while entries name principals',
                TABLE = 'board_principal';
        END IF;
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'restrict_violation',
        MESSAGE = format('principal %s is kept: principals are never deleted, nor their ids'
                         ' changed', OLD.id),
        TABLE = 'board_principal';
END
$$;

CREATE OR REPLACE TRIGGER board_principal_kept
    BEFORE DELETE ON board_principal
    FOR EACH ROW EXECUTE FUNCTION board_principal_kept();

CREATE OR REPLACE TRIGGER board_principal_id_kept
    BEFORE UPDATE OF id ON board_principal
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id)
    EXECUTE FUNCTION board_principal_kept();

CREATE OR REPLACE TRIGGER board_principal_emptied
    AFTER TRUNCATE ON board_principal
    FOR EACH STATEMENT EXECUTE FUNCTION board_principal_kept();
