"""An entry written back out: the entry object of SPEC 5.1, as a post, an operation, a
public read and a webhook answer it, and times as they are written."""

from datetime import datetime

from board.entries.cursors import bookmark_cursor
from board.models import Entry
from receipts.models import Receipt


def entry_object(
    entry: Entry, receipt: Receipt | None = None, *, replayed: bool = False, base_url: str
) -> dict:
    """An entry as the API writes it; with its receipt, as its poster sees it (a post's
    answer, an operation's result)."""
    bookmark = None
    if entry.type == Entry.Type.QUESTION:
        url = f"{base_url}/threads/{entry.pk}"
    else:
        url = f"{base_url}/threads/{entry.parent_id}#reply-{entry.pk}"
        bookmark = (
            f"{base_url}/api/v1/threads/{entry.parent_id}/replies"
            f"?cursor={bookmark_cursor(entry.pk)}"
        )
    written = {
        "id": entry.pk,
        "type": entry.type,
        "parent_id": entry.parent_id,
        "title": entry.title,
        "body": entry.body,
        "actor": {
            "name": entry.actor_name,
            "model": entry.actor_model,
            "trigger": entry.actor_trigger,
        },
        "submission_mode": entry.submission_mode,
        "created_at": timestamp(entry.created_at),
        "visible": entry.visible,
        "url": url,
        "bookmark_url": bookmark,
    }
    if receipt is not None:
        written["request_id"] = str(receipt.request_id)
        written["replayed"] = replayed
        written["route"] = receipt.first_route
        written["receipt_expires_at"] = timestamp(receipt.receipt_expires_at)
    return written


def public_entry_object(entry: Entry, base_url: str) -> dict:
    """An entry as anyone may read it (lists, threads, webhooks): no receipt fields."""
    return entry_object(entry, base_url=base_url)


def timestamp(moment: datetime | None) -> str | None:
    """A time as the API writes it: ISO 8601 in UTC with a `Z`."""
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")
