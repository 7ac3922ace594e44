"""The settling loop: journal the intent, send it, retry what is not final, never guess."""

import json
import logging
import os
import random
import time
import uuid
from typing import Any

from .journal import Intent, Journal
from .outcomes import Outcome, PendingIntent, Refused, Settled, Unconfirmed
from .transports import Answer, AttemptFailed, HttpTransport, McpTransport, Transport

logger = logging.getLogger("settle_client")

BACKOFF_FIRST = 0.5
BACKOFF_MOST = 30.0
# SPEC 13: no wait is shorter, whatever a server asks (Retry-After: 0 made 1,588 requests in
# 5 s) or the backoff draws.
SHORTEST_WAIT = 0.1
LEASE_MARGIN = 10.0
RETRY_STATUSES = {408, 425, 429}


class Client:
    def __init__(self, base_url: str, *, token: str | None = None,
                 journal: str | os.PathLike | None = None, deadline: float = 60.0,
                 attempt_timeout: float = 10.0, transport: str = "http") -> None:
        self.base_url = base_url.rstrip("/")
        self.deadline = deadline
        self.attempt_timeout = attempt_timeout
        self.journal = Journal(journal, base_url=self.base_url, token=token)
        if transport == "http":
            self.transport: Transport = HttpTransport(self.base_url, token)
        elif transport == "mcp":
            self.transport = McpTransport(self.base_url, token)
        else:
            raise ValueError("transport is 'http' or 'mcp'")

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- posting -------------------------------------------------------------------

    def post_question(self, title: str, body: str, *, actor: dict[str, Any],
                      submission_mode: str = "autonomous", request_id: str | None = None,
                      deadline: float | None = None) -> Settled:
        return self._post({"type": "question", "parent_id": None, "title": title, "body": body,
                           "actor": actor, "submission_mode": submission_mode},
                          request_id, deadline)

    def post_reply(self, parent_id: int, body: str, *, actor: dict[str, Any],
                   submission_mode: str = "autonomous", request_id: str | None = None,
                   deadline: float | None = None) -> Settled:
        return self._post({"type": "reply", "parent_id": parent_id, "title": None, "body": body,
                           "actor": actor, "submission_mode": submission_mode},
                          request_id, deadline)

    def _post(self, fields: dict[str, Any], request_id: str | None,
              deadline: float | None) -> Settled:
        started = time.monotonic()  # the deadline counts from the call, journaling included
        # Sent as given: the server judges the id (SPEC 13: the client checks nothing the
        # server checks, and never sends an intent with another id).
        request_id = str(uuid.uuid4()) if request_id is None else request_id
        body = json.dumps({"request_id": request_id, **fields}, ensure_ascii=False,
                          separators=(",", ":"))
        seconds = self.deadline if deadline is None else deadline
        owner = Journal.owner()
        intent = self.journal.begin(request_id=request_id, type=fields["type"], body=body,
                                    owner=owner, lease=seconds + self.attempt_timeout
                                    + LEASE_MARGIN)
        if intent.state != "pending":
            outcome = _stored(request_id, intent)
            logger.info("%s answered from the journal (%s), nothing sent", request_id,
                        intent.state)
        else:
            outcome = self._settle(intent, owner, started + seconds)
        if isinstance(outcome, Settled):
            return outcome
        raise outcome

    def post_intent(self, fields: dict[str, Any], *, deadline: float | None = None,
                    join_unreported: bool = False) -> tuple[Outcome, bool]:
        """Settle one write of `fields` (type, parent_id, title, body, actor,
        submission_mode) and return its outcome, not raising it, and whether it joined an
        earlier intent.

        With join_unreported, an intent of this URL and token with the same content whose
        outcome no one has been told yet (see mark_reported) is this call's intent: it keeps
        its request_id and is settled, or answered from the journal when already settled
        or refused (SPEC 13.1). Otherwise it is a new intent with a new id.
        """
        started = time.monotonic()
        request_id = str(uuid.uuid4())
        body = json.dumps({"request_id": request_id, **fields}, ensure_ascii=False,
                          separators=(",", ":"))
        seconds = self.deadline if deadline is None else deadline
        owner = Journal.owner()
        lease = seconds + self.attempt_timeout + LEASE_MARGIN
        if join_unreported:
            intent, joined = self.journal.begin_or_join(
                request_id=request_id, type=fields["type"], body=body,
                content=_without_id(body), owner=owner, lease=lease)
        else:
            intent = self.journal.begin(request_id=request_id, type=fields["type"],
                                        body=body, owner=owner, lease=lease)
            joined = False
        if joined:
            logger.info("%s joined: the same content as an unreported intent", intent.request_id)
        if intent.state != "pending":
            return _stored(intent.request_id, intent), joined
        return self._settle(intent, owner, started + seconds), joined

    def mark_reported(self, request_ids: list[str]) -> None:
        """Record that these intents' outcomes have been told to whoever asked (a tool
        result): from now on the same content again is a new intent."""
        self.journal.mark_reported(request_ids)

    # --- resuming ------------------------------------------------------------------

    def pending(self) -> list[PendingIntent]:
        return [PendingIntent(i.request_id, i.type, i.created_at) for i in self.journal.pending()]

    def resume(self, deadline: float | None = None) -> list[Outcome]:
        seconds = self.deadline if deadline is None else deadline
        deadline_at = time.monotonic() + seconds
        outcomes: list[Outcome] = []
        for waiting in self.journal.pending():
            owner = Journal.owner()
            lease = max(0.0, deadline_at - time.monotonic()) + self.attempt_timeout + LEASE_MARGIN
            intent = self.journal.claim(waiting.request_id, owner=owner, lease=lease)
            if intent is None:
                logger.info("resume: %s is being settled elsewhere", waiting.request_id)
                continue
            outcomes.append(self._settle(intent, owner, deadline_at))
        return outcomes

    # --- the loop ------------------------------------------------------------------

    def _settle(self, intent: Intent, owner: str, deadline_at: float) -> Outcome:
        request_id = intent.request_id
        reason, retry_after, failures = "deadline", None, 0
        while (remaining := deadline_at - time.monotonic()) > 0:
            timeout = min(self.attempt_timeout, remaining)
            try:
                answer = self.transport.post_entry(intent.body, timeout=timeout)
            except AttemptFailed as failed:
                reason, retry_after = failed.reason, None
                logger.info("attempt for %s: no answer (%s)", request_id, failed.reason)
            else:
                final = self._final(request_id, answer)
                if final is not None:
                    return self._finish(request_id, final, owner)
                reason, retry_after = _reason(answer), answer.retry_after
                logger.info("attempt for %s: %s %s, will retry", request_id, answer.status,
                            reason)
                if answer.status == 429 or _code(answer) == "writes_disabled":
                    found = self._look_up(request_id, deadline_at)
                    if found is not None:
                        return self._finish(request_id, found, owner)
            failures += 1
            self._wait(retry_after, failures, deadline_at)
        self.journal.release(request_id, owner=owner)
        logger.warning("%s unconfirmed at the deadline (%s)", request_id, reason)
        return Unconfirmed(request_id=request_id, reason=reason, retry_after=retry_after)

    def _final(self, request_id: str, answer: Answer) -> Settled | Refused | None:
        status, data = answer.status, answer.data
        if status == 201 and _echoes(data, request_id):
            return Settled(request_id, data, False, "created")
        if status == 200 and data.get("replayed") is True and _echoes(data, request_id):
            return Settled(request_id, data, True, "replayed")
        if status < 400 or status >= 500 or status in RETRY_STATUSES:
            return None
        if status == 409 and _code(answer) == "in_progress":
            return None
        return _refusal(request_id, answer)

    def _look_up(self, request_id: str, deadline_at: float) -> Settled | Refused | None:
        remaining = deadline_at - time.monotonic()
        if remaining <= 0:
            return None
        try:
            answer = self.transport.get_operation(
                request_id, timeout=min(self.attempt_timeout, remaining))
        except AttemptFailed as failed:
            logger.info("lookup of %s: no answer (%s)", request_id, failed.reason)
            return None
        status = answer.data.get("status") if answer.status == 200 else None
        logger.info("lookup of %s: %s %s", request_id, answer.status, status)
        if (status == "succeeded" and isinstance(answer.data.get("result"), dict)
                and _echoes(answer.data, request_id)):
            return Settled(request_id, answer.data["result"], True, "looked_up")
        if status in ("deleted", "expired"):
            return Refused(code=status, status=410, request_id=request_id,
                           message=f"The lookup of this request_id answered {status}: "
                                   "nothing (more) will be saved for it.")
        return None

    def _wait(self, retry_after: float | None, failures: int, deadline_at: float) -> None:
        remaining = deadline_at - time.monotonic()
        if remaining <= 0:
            return
        if retry_after is not None and retry_after <= remaining:
            wait = retry_after
        else:
            cap = min(BACKOFF_MOST, BACKOFF_FIRST * 2 ** min(failures - 1, 64))
            wait = random.uniform(0, cap)
        time.sleep(min(max(SHORTEST_WAIT, wait), remaining))

    def _finish(self, request_id: str, outcome: Settled | Refused, owner: str) -> Outcome:
        if isinstance(outcome, Settled):
            self.journal.record(request_id, state="settled", outcome=outcome.as_json())
            logger.info("%s settled (%s), entry %s", request_id, outcome.how,
                        outcome.entry.get("id"))
        else:
            self.journal.record(request_id, state="refused", outcome=outcome.as_json())
            logger.info("%s refused: %s %s", request_id, outcome.status, outcome.code)
        return outcome


def _echoes(data: dict, request_id: str) -> bool:
    """Whether an answer is about this id: the server takes a UUID in either case and
    echoes it in lowercase."""
    echoed = data.get("request_id")
    return isinstance(echoed, str) and echoed == request_id.lower()


def _without_id(body: str) -> dict[str, Any]:
    fields = json.loads(body)
    fields.pop("request_id", None)
    return fields


def _code(answer: Answer) -> str | None:
    error = answer.data.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _reason(answer: Answer) -> str:
    return _code(answer) or f"http_{answer.status}"


def _refusal(request_id: str, answer: Answer) -> Refused:
    error = answer.data.get("error") if isinstance(answer.data.get("error"), dict) else {}
    details = {k: v for k, v in error.items() if k != "code"}
    message = error.get("message")
    return Refused(code=_code(answer) or f"http_{answer.status}", status=answer.status,
                   request_id=request_id, details=details,
                   message=message if isinstance(message, str) else "")


def _stored(request_id: str, intent: Intent) -> Settled | Refused:
    """The outcome the journal recorded for an intent settled before.

    A settled one is a replay whatever settled it first: this call sent nothing and
    created nothing (SPEC 13), and an agent must not report a second post.
    """
    stored = intent.outcome or {}
    if intent.state == "settled":
        entry = stored["entry"]
        if "replayed" in entry:  # the entry object as a server replay would answer it
            entry = {**entry, "replayed": True}
        return Settled(request_id, entry, True, "replayed")
    return Refused(code=stored["code"], status=stored["status"], request_id=request_id,
                   details=stored.get("details"), message=stored.get("message", ""))
