"""The identity's unique constraint with `request_id` first, `(request_id, scope,
operation)`, and the index on `request_id` alone dropped: the constraint's index serves
the operators' look-up by `request_id` as well, and every new post writes one index
entry fewer.

On PostgreSQL the new unique index is built beside the writers (`CONCURRENTLY`), then
takes the constraint's place in one short `ALTER TABLE`; the old index goes
concurrently. A claim made while this runs meets one unique index or the other (a
unique violation on the receipts is a lost claim whichever index reports it). Hence not
atomic. SQLite: the constraint is rebuilt as Django does it."""

from django.db import migrations, models

NEW = "receipt_identity_building"
TABLE = "receipts_receipt"
NEW_CONSTRAINT = models.UniqueConstraint(
    fields=["request_id", "scope", "operation"], name="receipt_one_per_identity"
)


def _swap(schema_editor, columns: str, drop_index: bool) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # the operations after this one do it
    execute = schema_editor.execute
    execute(f"DROP INDEX CONCURRENTLY IF EXISTS {NEW}")  # a failed earlier run's, INVALID
    execute(f"CREATE UNIQUE INDEX CONCURRENTLY {NEW} ON {TABLE} ({columns})")
    execute(
        f"ALTER TABLE {TABLE} DROP CONSTRAINT receipt_one_per_identity, "
        f"ADD CONSTRAINT receipt_one_per_identity UNIQUE USING INDEX {NEW}"
    )
    if drop_index:
        execute("DROP INDEX CONCURRENTLY IF EXISTS receipt_request_id")
    else:
        execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS receipt_request_id ON {TABLE} (request_id)")


def forwards(apps, schema_editor):
    _swap(schema_editor, "request_id, scope, operation", drop_index=True)


def backwards(apps, schema_editor):
    _swap(schema_editor, "scope, operation, request_id", drop_index=False)


class _StateOnlyOnPostgreSQL:
    """Django's own operation on SQLite; on PostgreSQL its state change only (the
    function above changed the database there)."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class RemoveConstraint(_StateOnlyOnPostgreSQL, migrations.RemoveConstraint):
    pass


class AddConstraint(_StateOnlyOnPostgreSQL, migrations.AddConstraint):
    pass


class RemoveIndex(_StateOnlyOnPostgreSQL, migrations.RemoveIndex):
    pass


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("receipts", "0006_purge_batch_indexes")]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
        RemoveConstraint(model_name="receipt", name="receipt_one_per_identity"),
        AddConstraint(model_name="receipt", constraint=NEW_CONSTRAINT),
        RemoveIndex(model_name="receipt", name="receipt_request_id"),
    ]
