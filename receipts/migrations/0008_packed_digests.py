"""Receipts keep their request's per-field digests packed (`packed_digests`, 16 bytes a
field, receipts/fingerprint.py) instead of as JSON text: about 200 bytes fewer on every
new receipt, and in the WAL of every new post. `digests` stays, nullable, for the
receipts made before: their retries are compared with it until they expire, so a retry
of a post made before this migration still replays (no rows are rewritten, no table
lock held for a rewrite). The replay function `receipts_replay` compares whichever form
the receipt keeps: version 2 of receipts/sql/receipts_replay.sql, applied by version
(receipts/function_file.py).

Reversing it needs every receipt to keep the JSON form: receipts made since keep only
the packed one, so it fails while any is left (purge them first)."""

from django.db import migrations, models

from receipts.function_file import FunctionFile

FUNCTION_FILE = FunctionFile(
    "receipts/sql/receipts_replay.sql", version=2,
    code="331162802ebbaa5dbfc427b22bd5509f6ad4ed794699f5eef0574e46bc070ff8",
)
# The function as migration 0005 left it, to put back when this one is reversed.
EARLIER_SIGNATURE = (
    "receipts_replay(text, text, uuid, timestamptz, jsonb, text, uuid, text, integer, boolean)"
)
SIGNATURE = (
    "receipts_replay(text, text, uuid, timestamptz, jsonb, bytea, text, uuid, text, integer,"
    " boolean)"
)
EARLIER = '''
CREATE OR REPLACE FUNCTION receipts_replay(
    replay_scope text, replay_operation text, replay_request_id uuid,
    replay_now timestamptz, replay_digests jsonb, deleted_state text,
    attempt_identity uuid, attempt_route text, wait_ms integer, commit_quietly boolean
) RETURNS TABLE (
    id bigint, state text, digests jsonb, result_id bigint, first_route text,
    attempts integer, first_seen_at timestamptz, last_seen_at timestamptz,
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
        RETURNING r.id, r.state::text, r.digests, r.result_id, r.first_route::text,
            r.attempts, r.first_seen_at, r.last_seen_at, r.receipt_expires_at,
            r.deleted_at,
            CASE WHEN r.state = deleted_state THEN 'deleted'
                WHEN r.receipt_expires_at <= replay_now THEN 'expired'
                WHEN r.digests = replay_digests THEN 'replayed'
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
        # Its parameters and columns change: a new signature, so the old one goes first.
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {EARLIER_SIGNATURE}")
        schema_editor.execute(text)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {SIGNATURE}")
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("receipts", "0007_identity_request_id_first")]

    operations = [
        migrations.AddField(
            model_name="receipt", name="packed_digests", field=models.BinaryField(null=True),
        ),
        migrations.AlterField(
            model_name="receipt", name="digests", field=models.JSONField(null=True),
        ),
        migrations.RunPython(apply, restore, elidable=False),
    ]
