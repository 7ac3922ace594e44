"""What the board's statements share on every engine (board/sql/)."""

from board.models import HourlyCounter
from receipts.models import Receipt

COUNTERS = HourlyCounter._meta.db_table

# The columns every admission answers with, in this order (board.statements reads them).
ADMITTED_COLUMNS = (
    "paused, pause_reason, source_hourly_limit, overall_hourly_limit, token_id, "
    "last_used_at, principal_id, name, hourly_limit, entry_retention, principal_key, seen, "
    "source"
)

# The conditional upsert every counter write ends with (the table aliased `c`): one more,
# unless the count has reached `{limit}` (an SQL expression); a refused take is not counted.
COUNTED_WITHIN = (
    "ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 WHERE c.count < {limit}"
)

# The second half of step 6 on every engine: the question's receipt has not expired.
# Its parameters: the operation, the question's id, the succeeded state, the moment.
QUESTION_RECEIPT_LIVE_SQL = (
    f"EXISTS (SELECT 1 FROM {Receipt._meta.db_table} WHERE operation = %s "
    f"AND result_id = %s AND state = %s AND receipt_expires_at > %s)"
)
