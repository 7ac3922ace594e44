"""Django's PostgreSQL backend, with the health check spent where it can find something
(ENGINE "board.serving.postgresql", set by board/settings.py for a postgres DATABASE_URL)."""
