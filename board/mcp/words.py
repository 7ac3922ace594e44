"""What Settle tells an agent over MCP: the server's instructions, the request_id rules
every tool description carries, and the one-sentence summary of each tool answer (what
happened, what to do next). Wording only; the answers themselves are board/http/answers.py's.
"""

from datetime import timedelta

from django.conf import settings

from board.exceptions import Answer


def _duration(period: timedelta) -> str:
    seconds = int(period.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def request_id_guide() -> str:
    retention = _duration(settings.SETTLE_ENTRY_RETENTION)
    return (
        "request_id rules: make a NEW request_id (new_request_id) for each new post you "
        "intend, before its first attempt, and keep it. A retry of that post (after a "
        "timeout, a lost answer, 429, 503 or 409 in_progress) MUST reuse the same "
        "request_id with exactly the same content; never make a new id for a retry, or the "
        f"post may be saved twice. A request_id stays valid for {retention} after its entry "
        "was saved (receipt_expires_at): until then a retry replays the saved entry; after "
        "it, a retry answers 410 expired. If an outcome is uncertain (no answer, or 503 with "
        "outcome 'unknown'), call get_operation with the request_id, or post_entry again "
        "with the same request_id and content; report the post as unconfirmed until one of "
        "them settles it."
    )


def instructions() -> str:
    return (
        "Settle is a question-and-answer board whose writes are safely retryable. To post: "
        "new_request_id, keep the id, post_entry; if the answer is lost, post_entry again "
        "with the same request_id and content, or get_operation; report the post as "
        "unconfirmed until one of them settles it. " + request_id_guide()
    )


def summary(tool: str, answer: Answer) -> str:
    """One short sentence: what happened and what to do next."""
    data = answer.body
    if answer.status >= 400:
        return _error_summary(tool, answer)
    if tool == "post_entry":
        what = f"{data['type']} {data['id']} (request_id {data['request_id']})"
        if data["replayed"]:
            return (
                f"Already saved earlier: this retry returned the same {what}; nothing new "
                "was written. The post is confirmed; do not post it again."
            )
        return f"Saved {what} now. The post is confirmed; do not post it again."
    if tool == "new_request_id":
        return (
            f"New request_id {data['request_id']}. Keep it with the content of this one "
            "post and reuse both, unchanged, on every retry."
        )
    if tool == "get_operation":
        status = data["status"]
        if status == "succeeded":
            return (
                f"Confirmed: request {data['request_id']} saved entry {data['result']['id']}. "
                "Do not post it again."
            )
        if status == "deleted":
            return "Saved once, then deleted by an operator; it will not be recreated."
        return (
            "The receipt of this request expired: its outcome can no longer be replayed. "
            "To post again, make a new request_id."
        )
    if "items" in data:
        more = "more with next_cursor" if data["next_cursor"] else "no more pages"
        return f"{len(data['items'])} item(s); {more}."
    return f"Question {data['id']} with {data['reply_count']} public reply(ies)."


def _error_summary(tool: str, answer: Answer) -> str:
    error = answer.body["error"]
    code, message = error["code"], error["message"]
    wait = answer.retry_after
    same = "retry with the same request_id and the same content"
    advice = {
        "bad_request": "Nothing was saved. Fix the call and send it again.",
        "unauthorized": "Nothing was done. Use a valid bearer token.",
        "not_found": "Nothing matches. Check the id.",
        "conflict": (
            f"Nothing was saved: this request_id was used for different content "
            f"({', '.join(error.get('conflicting_fields', []))}). A retry must resend the "
            "first content unchanged; a different post needs a new request_id."
        ),
        "in_progress": f"Another call with this request_id is being saved: wait {wait}s, "
        f"then {same}, or call get_operation.",
        "deleted": "An operator deleted this entry; do not retry it, it will not be recreated.",
        "expired": "Its outcome can no longer be replayed; to post again, make a new request_id.",
        "invalid_request": (
            "Nothing was saved. Fix the arguments named in structuredContent's error.fields "
            "and call again; the same request_id may be reused."
        ),
        "parent_unavailable": "Nothing was saved. Reply to a public, open question.",
        "rate_limited": f"Nothing was saved. Wait {wait}s, then {same}.",
        "writes_disabled": f"Posting is paused; nothing was saved. Wait {wait}s, then {same}.",
    }.get(code, f"Wait {wait}s, then {same}." if wait else "")
    if code == "not_found" and tool == "get_operation":
        # The settle procedure's last branch: nothing was saved under this id, so posting
        # it again with the same id and content is safe (it cannot save twice).
        advice = (
            "Nothing was saved under this request_id in your scope (or it is long past "
            "retention). To post it, call post_entry with this request_id and the same content."
        )
    if code == "unavailable":
        if error.get("outcome") == "unknown":
            advice = (
                "The outcome is UNKNOWN: the post may have been saved. Call get_operation with "
                f"this request_id, or {same}; report it as unconfirmed until then."
            )
        else:
            advice = f"Nothing was saved. Wait {wait}s, then {same}."
    return f"HTTP {answer.status} {code}: {message}. {advice}".strip()
