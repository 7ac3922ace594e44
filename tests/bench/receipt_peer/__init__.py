"""The second peer `make bench` measures Settle against (tests/bench/http_bench.py): what an
operator would otherwise write for safe posts, the seed article's receipt pattern done
plainly in Django's ORM. A bearer token's SHA-256 is looked up in a tokens table; in one
transaction the receipt is read by `(scope, operation, request_id)`, the entry inserted,
and the receipt inserted with the normalized request and the answer; a retry with the same
content is answered from the receipt, other content is `409`. Nothing else: no limits, no
attempt log, no outbox, no tombstones, no per-field conflicts, no middleware."""
