"""Index changes that do not lock writes on PostgreSQL, for migrations on large tables.

`CREATE INDEX` takes a lock that blocks every insert for as long as the build runs: at
millions of receipts, minutes in which no agent can post. `CONCURRENTLY` builds beside
the writers instead, but cannot run inside a transaction, so a migration using these
operations sets `atomic = False`. SQLite has no concurrent build (and one writer at a
time anyway): there the plain operation runs. Django's own AddIndexConcurrently refuses
every engine but PostgreSQL, which is why these exist.

A concurrent build that fails leaves an INVALID index behind; drop it by name before the
migration is run again.
"""

from django.db.migrations.operations import AddIndex, RemoveIndex


def _postgresql(schema_editor) -> bool:
    return schema_editor.connection.vendor == "postgresql"


class AddIndexOnline(AddIndex):
    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if not _postgresql(schema_editor):
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if not _postgresql(schema_editor):
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)


class RemoveIndexOnline(RemoveIndex):
    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if not _postgresql(schema_editor):
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            index = from_state.models[app_label, self.model_name_lower].get_index_by_name(self.name)
            schema_editor.remove_index(model, index, concurrently=True)

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if not _postgresql(schema_editor):
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            index = to_state.models[app_label, self.model_name_lower].get_index_by_name(self.name)
            schema_editor.add_index(model, index, concurrently=True)
