"""The peer `make bench` measures Settle against (tests/bench/http_bench.py): the plainest
Django + django-ninja project that answers JSON and inserts one row. No middleware, no
auth, no sessions; its own settings (DJANGO_SETTINGS_MODULE=tests.bench.plain.settings)
and its one table, `bench_plain_row`, on the DATABASE_URL the bench gives it."""
