"""Index changes that do not lock writes on PostgreSQL, for migrations on large tables.

`CREATE INDEX` takes a lock that blocks every insert for as long as the build runs: at
millions of receipts, minutes in which no agent can post. `CONCURRENTLY` builds beside
the writers instead, but cannot run inside a transaction, so a migration using these
operations sets `atomic = False`. SQLite has no concurrent build (and one writer at a
time anyway): there the plain operation runs. Django's own AddIndexConcurrently refuses
every engine but PostgreSQL, which is why these exist. They live in the lowest app, so
every app's migrations may use them (receipts imports nothing of the others).

A concurrent build that fails leaves an INVALID index behind; drop it by name before the
migration is run again.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db.migrations import AddIndex, RemoveIndex


class AddIndexOnline(AddIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class RemoveIndexOnline(RemoveIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        return RemoveIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        return RemoveIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)
