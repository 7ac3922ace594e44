"""The console's entry filters and search through indexes (SPEC 11.7), built without
locking posts out: on PostgreSQL `CREATE INDEX CONCURRENTLY` (so this migration is not
atomic) and pg_trgm GIN indexes on title and body for `ILIKE '%text%'`; on SQLite plain
indexes and an FTS5 trigram table over board_entry kept by triggers (board.selectors reads
it). The SQL is written out here, not imported, so this migration runs what it was
written with whatever board.selectors' search becomes."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline

TRIGRAM_INDEXES = {
    "entry_title_trigrams": "title gin_trgm_ops",
    "entry_body_trigrams": "body gin_trgm_ops",
}

SQLITE_SEARCH = [
    "CREATE VIRTUAL TABLE board_entry_search USING fts5("
    "title, body, content='board_entry', content_rowid='id', tokenize='trigram')",
    """CREATE TRIGGER board_entry_search_insert AFTER INSERT ON board_entry BEGIN
        INSERT INTO board_entry_search(rowid, title, body) VALUES (new.id, new.title, new.body);
    END""",
    """CREATE TRIGGER board_entry_search_delete AFTER DELETE ON board_entry BEGIN
        INSERT INTO board_entry_search(board_entry_search, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
    END""",
    # A deletion blanks the text with an update: the old text leaves the index with it.
    """CREATE TRIGGER board_entry_search_update AFTER UPDATE OF title, body ON board_entry
    BEGIN
        INSERT INTO board_entry_search(board_entry_search, rowid, title, body)
        VALUES ('delete', old.id, old.title, old.body);
        INSERT INTO board_entry_search(rowid, title, body) VALUES (new.id, new.title, new.body);
    END""",
    "INSERT INTO board_entry_search(board_entry_search) VALUES ('rebuild')",
]
SQLITE_SEARCH_DROP = [
    "DROP TRIGGER IF EXISTS board_entry_search_insert",
    "DROP TRIGGER IF EXISTS board_entry_search_delete",
    "DROP TRIGGER IF EXISTS board_entry_search_update",
    "DROP TABLE IF EXISTS board_entry_search",
]


def search_index_build(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for name, column in TRIGRAM_INDEXES.items():
            schema_editor.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON board_entry USING gin ({column})"
            )
    elif vendor == "sqlite":
        for statement in SQLITE_SEARCH:
            schema_editor.execute(statement)


def search_index_drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        for name in TRIGRAM_INDEXES:
            schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    elif vendor == "sqlite":
        for statement in SQLITE_SEARCH_DROP:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("board", "0006_post_admit_from_file"),
    ]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("deleted_at__isnull", True), ("visible", False)),
                fields=["-id"], name="entry_hidden_newest",
            ),
        ),
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("deleted_at__isnull", False)),
                fields=["-id"], name="entry_deleted_newest",
            ),
        ),
        AddIndexOnline(
            model_name="entry",
            index=models.Index(fields=["actor_name", "-id"], name="entry_actor_newest"),
        ),
        migrations.RunPython(search_index_build, search_index_drop, elidable=False),
    ]
