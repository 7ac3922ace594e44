"""Receipts keep their request's digests in a smaller packed form (receipts/fingerprint.py
`packed_digests`): a version byte, one 16-byte digest of the whole request, which alone
decides replay or conflict (128 bits, as before), and a 4-byte tag a field that only
names a conflict's fields. 41 bytes for a post where 16 bytes a field took 96: less WAL
on every new post (docs/write-path.md). No rows are rewritten: receipts made before keep
their 16 bytes a field (or their JSON `digests`) and are compared in that form until
they expire, so their retries replay or conflict as they did. The replay function
`receipts_replay` takes the per-field form too, to compare them: version 3 of
receipts/sql/receipts_replay.sql, applied by version (receipts/function_file.py).

Reversing it puts version 2 back, which compares a packed value whole with the
per-field form: a retry of a receipt made since (the versioned form) would answer
`409 conflict`, so purge those first."""

from django.db import migrations

from receipts.function_file import FunctionFile

FUNCTION_FILE = FunctionFile(
    "receipts/sql/receipts_replay.sql", version=3,
    code="581f1693f777105008fed0280ea54712b480b88b92e7a76877aa694d2a617da3",
)
# The function as migration 0008 left it, to put back when this one is reversed.
EARLIER_SIGNATURE = (
    "receipts_replay(text, text, uuid, timestamptz, jsonb, bytea, text, uuid, text, integer,"
    " boolean)"
)
# As migrations 0004 and 0005 left it: on a fresh database 0008 applies nothing (this
# migration applies the file), so 0008 has not dropped it either.
FIRST_SIGNATURE = (
    "receipts_replay(text, text, uuid, timestamptz, jsonb, text, uuid, text, integer, boolean)"
)
SIGNATURE = (
    "receipts_replay(text, text, uuid, timestamptz, jsonb, bytea, bytea, text, uuid, text,"
    " integer, boolean)"
)
EARLIER = '''
CREATE OR REPLACE FUNCTION receipts_replay(
    replay_scope text, replay_operation text, replay_request_id uuid,
    replay_now timestamptz, replay_digests jsonb, replay_packed bytea, deleted_state text,
    attempt_identity uuid, attempt_route text, wait_ms integer, commit_quietly boolean
) RETURNS TABLE (
    id bigint, state text, digests jsonb, packed_digests bytea, result_id bigint,
    first_route text, attempts integer, first_seen_at timestamptz, last_seen_at timestamptz,
    receipt_expires_at timestamptz, deleted_at timestamptz, outcome text
) LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
#variable_conflict use_column
BEGIN
    -- The claim's wait bound (receipts/engines/postgresql.py, wait_bound_ms), set before the
    -- row is locked; and no flush wait for bookkeeping (commit_quietly), outside a
    -- caller's transaction only: that commit is the caller's.
    PERFORM set_config('lock_timeout', wait_ms::text, true);
    IF commit_quietly THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    RETURN QUERY
    WITH hit AS (
        UPDATE receipts_receipt AS r
        SET attempts = r.attempts + 1, last_seen_at = replay_now
        WHERE r.scope = replay_scope AND r.operation = replay_operation
            AND r.request_id = replay_request_id
        RETURNING r.id, r.state::text, r.digests, r.packed_digests, r.result_id,
            r.first_route::text, r.attempts, r.first_seen_at, r.last_seen_at,
            r.receipt_expires_at, r.deleted_at,
            CASE WHEN r.state = deleted_state THEN 'deleted'
                WHEN r.receipt_expires_at <= replay_now THEN 'expired'
                -- The packed digests, or the JSON form a receipt made before them keeps.
                WHEN COALESCE(r.packed_digests = replay_packed, r.digests = replay_digests)
                    THEN 'replayed'
                ELSE 'conflict' END AS outcome
    ), logged AS (
        INSERT INTO receipts_attempt (identity, receipt_id, route, outcome, detail, created_at)
        SELECT attempt_identity, hit.id, attempt_route, hit.outcome,
            CASE WHEN hit.outcome = 'replayed' THEN '' ELSE hit.outcome END, replay_now
        FROM hit
    )
    SELECT hit.* FROM hit;
END
$$;
'''


def apply(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    text = FUNCTION_FILE.text_to_apply()
    if text is not None:
        # A parameter more: a new signature, so the old ones go first.
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {FIRST_SIGNATURE}")
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {EARLIER_SIGNATURE}")
        schema_editor.execute(text)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {SIGNATURE}")
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("receipts", "0009_receipt_id_is_its_entry_id")]

    operations = [migrations.RunPython(apply, restore, elidable=False)]
