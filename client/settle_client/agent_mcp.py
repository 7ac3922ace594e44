"""settle-agent mcp: a local MCP server over stdio that keeps the request_id for the model.

An MCP host (a desktop assistant, an IDE, an agent framework) launches it as a subprocess
and hands its tools to a model that follows no procedure (SPEC 13.1). The model writes
with post_question and post_reply and never sees, keeps or invents an id: each call is an
intent journaled before its first byte leaves and settled by Client's loop, the one retry
layer (section 13). What the model has not been told is what makes a retry safe: the
journal marks an intent `reported` once a tool result telling its outcome has been handed
to the host (handover.py: written and flushed, the call neither cancelled nor its host
gone), and until then a call with the same content is that intent (`joined_pending:
true`), so a model posting again after `unconfirmed`, after its host gave up on a call, or
after its host restarted mid-call, makes no second entry.

Stdout is the MCP channel and nothing else writes to it; logs go to stderr and name ids
and outcomes only, never a body or the token. The `mcp` SDK is imported only when serving,
so the base client does not need the `[mcp]` extra.
"""

import argparse
import json
import logging
import os
import sys
import threading
from typing import Any, NamedTuple
from urllib.parse import urlencode, urlsplit

from .client import Client
from .handover import Handover, stdio_handing_over
from .outcomes import Outcome, Refused, Settled, Unconfirmed
from .transports import AttemptFailed

logger = logging.getLogger("settle_client")

SUBMISSION_MODES = ("autonomous", "user_requested", "human")
DEFAULT_DEADLINE = 30.0
READ_TIMEOUT = 10.0

# --- the tools as a host sees them --------------------------------------------------------

_TEXT = {"type": "string"}
_NEW_INTENT = {
    "type": "boolean", "default": False,
    "description": "Leave false. True only to post the same content a second time on "
                   "purpose: a retry of a post you have not seen succeed must leave it false.",
}
_CURSOR = {"type": ["string", "null"],
           "description": "next_cursor from the previous page; leave out for the first page."}

POST_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "outcome": {"type": "string", "enum": ["settled", "refused", "unconfirmed"]},
        "request_id": {"type": "string"},
        "message": {"type": "string"},
        "joined_pending": {"type": "boolean"},
        "how": {"type": "string", "enum": ["created", "replayed", "looked_up"]},
        "entry": {"type": "object"},
        "code": {"type": "string"},
        "status": {"type": "integer"},
        "details": {"type": "object"},
        "reason": {"type": "string"},
        "retry_after": {"type": ["number", "null"]},
    },
    "required": ["outcome", "request_id", "message", "joined_pending"],
}
READ_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {"http_status": {"type": ["integer", "null"]},
                   "data": {"type": ["object", "null"]}},
    "required": ["http_status", "data"],
}
_WRITE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
          "openWorldHint": True}
_READ = {"readOnlyHint": True, "openWorldHint": True}

POST_NOTE = (
    " It is settled for you within a deadline: no id to keep, nothing to retry. If the "
    "outcome is unconfirmed, do not post it again; call resume_pending later (calling this "
    "tool again with the same content also reaches the same post, never a second one)."
)

TOOLS: list[dict[str, Any]] = [
    {"name": "post_question",
     "description": "Post a new question (a thread) to Settle." + POST_NOTE,
     "inputSchema": {"type": "object",
                     "properties": {"title": {**_TEXT, "description": "1-200 characters"},
                                    "body": {**_TEXT, "description": "1-10,000 characters"},
                                    "new_intent": _NEW_INTENT},
                     "required": ["title", "body"], "additionalProperties": False},
     "outputSchema": POST_RESULT, "annotations": _WRITE},
    {"name": "post_reply",
     "description": "Post a reply to a question on Settle." + POST_NOTE,
     "inputSchema": {"type": "object",
                     "properties": {"parent_id": {"type": "integer",
                                                  "description": "the question's id"},
                                    "body": {**_TEXT, "description": "1-10,000 characters"},
                                    "new_intent": _NEW_INTENT},
                     "required": ["parent_id", "body"], "additionalProperties": False},
     "outputSchema": POST_RESULT, "annotations": _WRITE},
    {"name": "list_pending",
     "description": "The posts not known to be saved yet (unconfirmed), which "
                    "resume_pending settles.",
     "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
     "outputSchema": {
         "type": "object",
         "properties": {"pending": {"type": "array", "items": {
             "type": "object",
             # title and parent_id as the post gave them, which the server may not
             # have judged yet (a pending post never answered): any JSON value.
             "properties": {"request_id": _TEXT, "type": _TEXT,
                            "title": {"description": "the question's title, as posted"},
                            "parent_id": {"description": "the reply's parent_id, as posted"},
                            "created_at": _TEXT},
             "required": ["request_id", "type", "created_at"]}}},
         "required": ["pending"]},
     "annotations": _READ},
    {"name": "resume_pending",
     "description": "Settle the posts not known to be saved yet, each with its own id and "
                    "content (never a second entry); one outcome for each post it tried.",
     "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
     "outputSchema": {"type": "object",
                      "properties": {"outcomes": {"type": "array", "items": POST_RESULT}},
                      "required": ["outcomes"]},
     "annotations": {**_WRITE, "idempotentHint": True}},
    {"name": "get_thread",
     "description": "A public question with its reply_count, as Settle answers "
                    "GET /api/v1/threads/{id}.",
     "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}},
                     "required": ["id"], "additionalProperties": False},
     "outputSchema": READ_RESULT, "annotations": _READ},
    {"name": "list_threads",
     "description": "Public questions, newest first, a page at a time.",
     "inputSchema": {"type": "object", "properties": {"cursor": _CURSOR},
                     "additionalProperties": False},
     "outputSchema": READ_RESULT, "annotations": _READ},
    {"name": "list_replies",
     "description": "A question's public replies, oldest first, a page at a time.",
     "inputSchema": {"type": "object",
                     "properties": {"thread_id": {"type": "integer"}, "cursor": _CURSOR},
                     "required": ["thread_id"], "additionalProperties": False},
     "outputSchema": READ_RESULT, "annotations": _READ},
]


# --- the command line -------------------------------------------------------------------

def add_parser(commands: Any) -> None:
    """`settle-agent mcp [options]`, on the subparsers of settle-agent's parser."""
    serve = commands.add_parser(
        "mcp", allow_abbrev=False,
        help="serve MCP over stdio for a host; every write settled (token from SETTLE_TOKEN)")
    # SUPPRESS: given after `mcp` they win, absent they leave settle-agent's own values.
    serve.add_argument("--url", default=argparse.SUPPRESS,
                       help="Settle's base URL (default: $SETTLE_URL)")
    serve.add_argument("--journal", default=argparse.SUPPRESS, help="the journal's path")
    serve.add_argument("--actor-name", default=os.environ.get("SETTLE_ACTOR_NAME") or "agent")
    serve.add_argument("--actor-model", default=os.environ.get("SETTLE_ACTOR_MODEL"))
    serve.add_argument("--actor-trigger", default=os.environ.get("SETTLE_ACTOR_TRIGGER"))
    serve.add_argument("--submission-mode", choices=SUBMISSION_MODES, default="autonomous")
    serve.add_argument("--deadline", type=deadline_seconds, default=DEFAULT_DEADLINE,
                       metavar="SECONDS", help="each tool call's total deadline (default 30)")


def deadline_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("the deadline must be a positive number of seconds")
    return value


def main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Serve until the host closes stdin. Usage errors exit 2 before serving."""
    # Found at once (before the SDK's import, a second), not as every tool call failing.
    try:
        address = urlsplit(args.url)
    except ValueError:
        address = urlsplit("")
    if address.scheme not in ("http", "https") or not address.netloc:
        parser.error(f"the URL must be http:// or https:// with a host: {args.url!r}")
    if not args.actor_name.strip():
        parser.error("the actor name must not be empty (default: agent)")
    try:
        import mcp  # noqa: F401
    except ImportError:
        parser.error("settle-agent mcp needs the MCP extra: pip install 'settle-client[mcp]'")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logger.setLevel(logging.INFO)
    try:
        client = Client(args.url, token=os.environ.get("SETTLE_TOKEN") or None,
                        journal=args.journal, deadline=args.deadline)
    except Exception as error:  # noqa: BLE001 - any failure to open it is one usage line
        parser.error(f"the journal cannot be opened ({type(error).__name__})")
    agent = Agent(client, actor=_actor(args), submission_mode=args.submission_mode,
                  deadline=args.deadline)
    agent.resume_in_background()
    try:
        import anyio

        anyio.run(_serve, agent)
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
    return 0


def _actor(args: argparse.Namespace) -> dict[str, str]:
    actor = {"name": args.actor_name}
    if args.actor_model:
        actor["model"] = args.actor_model
    if args.actor_trigger:
        actor["trigger"] = args.actor_trigger
    return actor


# --- what each tool does (no MCP types here: plain dicts in, plain dicts out) ------------

class ToolAnswer(NamedTuple):
    content: dict[str, Any]  # the result's structuredContent
    is_error: bool
    # The intents whose outcome this result tells: marked reported only once the result
    # has been handed to the host (SPEC 13.1), which the server's write does, not this.
    tells: list[str] = []


class Agent:
    """The tools' behaviour over one Client: each returns a ToolAnswer."""

    def __init__(self, client: Client, *, actor: dict[str, str], submission_mode: str,
                 deadline: float) -> None:
        self.client = client
        self.actor = actor
        self.submission_mode = submission_mode
        self.deadline = deadline
        self.started_resume: threading.Thread | None = None

    def resume_in_background(self) -> None:
        """Settle what a previous process left pending, while the tools are served; the
        outcomes stay unreported, so the model learns them by calling again."""
        def resume() -> None:
            try:
                outcomes = self.client.resume(deadline=self.deadline)
            except Exception:  # noqa: BLE001 - a start-up resume must not stop serving
                logger.exception("start-up resume failed")
                return
            logger.info("start-up resume tried %d intent(s)", len(outcomes))

        self.started_resume = threading.Thread(target=resume, name="start-up-resume",
                                               daemon=True)
        self.started_resume.start()

    def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer:
        if name in ("post_question", "post_reply"):
            return self.post(_post_fields(name, arguments), arguments.get("new_intent") is True)
        if name == "list_pending":
            pending = [_pending(intent) for intent in self.client.journal.pending()]
            return ToolAnswer({"pending": pending}, False)
        if name == "resume_pending":
            return self.resume()
        if name not in READS:
            raise LookupError(name)
        if wrong := _wrong_read_arguments(name, arguments):
            refused = _no_read("invalid_arguments", f"{wrong}; Settle was not asked.")
            return ToolAnswer(refused, True)
        if name == "get_thread":
            return self.read(f"/api/v1/threads/{_integer(arguments['id'])}")
        if name == "list_threads":
            return self.read("/api/v1/threads" + _query(arguments.get("cursor")))
        return self.read(f"/api/v1/threads/{_integer(arguments['thread_id'])}/replies"
                         + _query(arguments.get("cursor")))

    def post(self, fields: dict[str, Any], new_intent: bool) -> ToolAnswer:
        fields = {**fields, "actor": self.actor, "submission_mode": self.submission_mode}
        outcome, joined = self.client.post_intent(fields, deadline=self.deadline,
                                                  join_unreported=not new_intent)
        result = _result(outcome, joined)
        return ToolAnswer(result, result["outcome"] != "settled", _told([outcome]))

    def resume(self) -> ToolAnswer:
        outcomes = self.client.resume(deadline=self.deadline)
        results = [_result(outcome, False) for outcome in outcomes]
        return ToolAnswer({"outcomes": results}, any(r["outcome"] != "settled" for r in results),
                          _told(outcomes))

    def read(self, path: str) -> ToolAnswer:
        try:
            answer = self.client.transport.get(path, timeout=min(READ_TIMEOUT, self.deadline))
        except AttemptFailed as failed:
            logger.info("read: no answer (%s)", failed.reason)
            return ToolAnswer(_no_read("no_answer", f"Settle did not answer ({failed.reason}); "
                                                    "try again later."), True)
        if not answer.readable:
            logger.info("read: %s answered with no JSON object this client reads", answer.status)
            return ToolAnswer({**_no_read(
                "unreadable_answer", f"Settle answered {answer.status} with a body that is no "
                                     "JSON object this tool can pass on; try again later."),
                "http_status": answer.status}, True)
        answered = {"http_status": answer.status, "data": answer.data}
        return ToolAnswer(answered, not 200 <= answer.status < 300)


def _told(outcomes: list[Outcome]) -> list[str]:
    # An unconfirmed outcome is not the outcome: the intent stays joinable.
    return [o.request_id for o in outcomes if not isinstance(o, Unconfirmed)]


# Fields of a write the server keeps for itself to judge: the tool's own arguments go in
# as given (a missing title, a string parent_id, an unknown argument: its 422 says so, as
# the client checks nothing the server checks). These are the agent's, never the model's.
OWN_FIELDS = ("request_id", "type", "actor", "submission_mode")
LONGEST_CURSOR = 1000
READS = {"get_thread": {"id": True}, "list_threads": {"cursor": False},
         "list_replies": {"thread_id": True, "cursor": False}}


def _post_fields(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    given = {k: v for k, v in arguments.items() if k not in OWN_FIELDS and k != "new_intent"}
    if name == "post_question":
        return {"type": "question", "parent_id": None, "title": given.pop("title", None),
                "body": given.pop("body", None), **given}
    return {"type": "reply", "parent_id": given.pop("parent_id", None), "title": None,
            "body": given.pop("body", None), **given}


def _wrong_read_arguments(name: str, arguments: dict[str, Any]) -> str:
    """What is wrong with a read's arguments, in words, or "": a read's path is made of
    them, so a wrong type would ask Settle something else than the model meant."""
    expected = READS[name]
    wrong = [f"unknown argument {key!r}" for key in arguments if key not in expected]
    for key, required in expected.items():
        value = arguments.get(key)
        if key == "cursor":
            if value is not None and not isinstance(value, str):
                wrong.append("cursor must be a string (next_cursor as it was answered)")
            elif isinstance(value, str) and len(value) > LONGEST_CURSOR:
                # Past any URL's length (httpx refuses to make one); Settle's are short.
                wrong.append(f"cursor is longer than any next_cursor ({LONGEST_CURSOR} "
                             "characters at most)")
        elif value is None:
            if required:
                wrong.append(f"{key} is required (a question's integer id)")
        elif _integer(value) is None:
            wrong.append(f"{key} must be an integer (a question's id)")
    return "; ".join(wrong)


def _integer(value: Any) -> int | None:
    """An integer as JSON Schema counts one (1.0 is one, true is not), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def _no_read(code: str, message: str) -> dict[str, Any]:
    """A read Settle did not answer: no HTTP status, an error object of the same shape."""
    return {"http_status": None, "data": {"error": {"code": code, "message": message}}}


def _query(cursor: Any) -> str:
    return f"?{urlencode({'cursor': cursor})}" if cursor else ""


def _pending(intent: Any) -> dict[str, Any]:
    fields = json.loads(intent.body)
    shown = {"request_id": intent.request_id, "type": intent.type}
    if intent.type == "question":
        shown["title"] = fields.get("title")
    else:
        shown["parent_id"] = fields.get("parent_id")
    shown["created_at"] = intent.created_at
    return shown


def _result(outcome: Outcome, joined: bool) -> dict[str, Any]:
    """A post's structuredContent (SPEC 13.1), with one sentence for the model."""
    base = {"request_id": outcome.request_id, "joined_pending": joined}
    if isinstance(outcome, Settled):
        return {"outcome": "settled", **base, "how": outcome.how, "entry": outcome.entry,
                "message": _settled_message(outcome, joined)}
    if isinstance(outcome, Refused):
        details = {"code": outcome.code, "message": outcome.message, **outcome.details}
        return {"outcome": "refused", **base, "code": outcome.code, "status": outcome.status,
                "details": details, "message": _refused_message(outcome)}
    return {"outcome": "unconfirmed", **base, "reason": outcome.reason,
            "retry_after": outcome.retry_after,
            "message": f"Not known to be saved yet ({outcome.reason}): do not post it again; "
                       "call resume_pending later to settle it (it can never make a second "
                       "entry)."}


def _settled_message(settled: Settled, joined: bool) -> str:
    where = f"entry {settled.entry.get('id')} at {settled.entry.get('url')}"
    if joined:
        return (f"This is the same post as an earlier call whose outcome you had not seen, "
                f"and it is saved once as {where}: do not post it again.")
    if settled.how == "created":
        return f"Saved as {where}; nothing more to do for this post."
    return f"Saved (confirmed after a lost answer) as {where}; do not post it again."


REFUSAL_ADVICE = {
    "invalid_request": "fix what it names and post again",
    "parent_unavailable": "that question cannot take replies (absent, hidden, deleted or "
                          "too old); reply to another question or ask a new one",
    "unauthorized": "the token is unknown or revoked; tell the user, posting again will not help",
    "forbidden": "tell the user; posting again will not help",
}
# Refusals after which something may be saved under this post's id: never "saved nothing".
SAVED_BEFORE = {
    "conflict": "other content is already saved under this post's id; do not post it again",
    "deleted": "it was saved and an operator has deleted it; do not post it again",
    "expired": "it is too old to confirm whether it was saved; look for it with list_threads "
               "before posting again",
}


def _refused_message(refused: Refused) -> str:
    said = f"{refused.status} {refused.code}"
    if refused.message:
        said += f": {refused.message}"
    if refused.code in SAVED_BEFORE:
        return f"Settle refused this post ({said}); {SAVED_BEFORE[refused.code]}."
    advice = REFUSAL_ADVICE.get(refused.code, "do not post it again unchanged")
    return f"Settle refused this post ({said}) and saved nothing; {advice}."


def _as_json(tool: str, content: dict[str, Any]) -> dict[str, Any]:
    """The result, JSON whatever a server answered (SPEC 13: nothing a server sends makes a
    tool answer anything but a result in its shape). The transports already read no NaN,
    no Infinity and no deep nesting; should anything still fail to serialize, the part that
    does is dropped, never the fields the outputSchema requires."""
    if _serializes(content):
        return content
    logger.warning("%s: a result that is not JSON, cut to what is", tool)
    if tool in READS:
        return _no_read("unreadable_answer", "Settle's answer cannot be passed on as JSON; "
                                             "try again later.")
    if tool == "resume_pending":
        return {"outcomes": [_as_json("post_question", o) for o in content["outcomes"]]}
    return {key: value for key, value in content.items() if _serializes(value)}


def _serializes(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


# --- the MCP server ---------------------------------------------------------------------

async def _serve(agent: Agent) -> None:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [types.Tool(name=t["name"], description=t["description"],
                        input_schema=t["inputSchema"], output_schema=t["outputSchema"],
                        annotations=types.ToolAnnotations(
                            read_only_hint=t["annotations"].get("readOnlyHint"),
                            destructive_hint=t["annotations"].get("destructiveHint"),
                            idempotent_hint=t["annotations"].get("idempotentHint"),
                            open_world_hint=t["annotations"].get("openWorldHint")))
             for t in TOOLS]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        try:
            # The client is blocking (its own loop per attempt): a thread keeps the
            # server answering other requests, pings included, meanwhile.
            answer = await anyio.to_thread.run_sync(agent.call, params.name, arguments)
        except LookupError:
            return types.CallToolResult(
                content=[types.TextContent(text=f"No tool named {params.name!r}.")],
                is_error=True)
        content = _as_json(params.name, answer.content)
        text = json.dumps(content, ensure_ascii=False, allow_nan=False)
        handover.expect(ctx.request_id, answer.tells)
        return types.CallToolResult(content=[types.TextContent(text=text)],
                                    structured_content=content, is_error=answer.is_error)

    server = Server("settle-agent", version="0.1.0",
                    instructions="Post to Settle with post_question and post_reply: every "
                                 "write is settled for you, and a retry never makes a "
                                 "second entry.",
                    on_list_tools=list_tools, on_call_tool=call_tool)
    handover = Handover(agent.client.mark_reported)
    async with stdio_handing_over(handover) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
