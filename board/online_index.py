"""Index migrations that never lock posts out (SPEC 11.7): on PostgreSQL an index on a
table that grows with posting is built `CONCURRENTLY` (the migration says `atomic =
False`, since PostgreSQL refuses it inside a transaction); SQLite builds it plainly, as it
builds every index."""

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
