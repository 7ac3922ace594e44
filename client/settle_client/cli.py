"""settle-agent: post, list pending intents and resume them from the command line.

The token comes only from SETTLE_TOKEN (there is no token option); the URL from --url or
SETTLE_URL. Exit status: 0 settled, 3 unconfirmed, 4 refused, 2 a usage error.
"""

import argparse
import json
import os
import sqlite3
import sys

from . import agent_mcp
from .client import Client
from .outcomes import Refused, Settled, Unconfirmed

EXIT_SETTLED, EXIT_USAGE, EXIT_UNCONFIRMED, EXIT_REFUSED = 0, 2, 3, 4


class _Parser(argparse.ArgumentParser):
    """A usage error is one line on stderr and exit status 2 (SPEC 13.1: a host shows it)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="settle-agent", allow_abbrev=False,
        description="Post to Settle and settle every write (token from SETTLE_TOKEN).",
    )
    parser.add_argument("--url", default=os.environ.get("SETTLE_URL"),
                        help="Settle's base URL (default: $SETTLE_URL)")
    parser.add_argument("--journal", default=None,
                        help="the journal's path (default: $SETTLE_JOURNAL or "
                             "~/.local/state/settle/journal.sqlite3)")
    commands = parser.add_subparsers(dest="command", required=True)

    post = commands.add_parser("post", allow_abbrev=False, help="post a question or a reply")
    kinds = post.add_subparsers(dest="kind", required=True)
    question = kinds.add_parser("question", allow_abbrev=False)
    question.add_argument("--title", required=True)
    reply = kinds.add_parser("reply", allow_abbrev=False)
    reply.add_argument("--parent-id", type=int, required=True,
                       help="the question's integer id")
    for each in (question, reply):
        each.add_argument("--body", required=True)
        each.add_argument("--actor-name", required=True)
        each.add_argument("--actor-model", default=None)
        each.add_argument("--actor-trigger", default=None)
        each.add_argument("--deadline", type=agent_mcp.deadline_seconds, default=None,
                          metavar="SECONDS")

    pending = commands.add_parser("pending", allow_abbrev=False,
                                  help="the intents not settled yet")
    pending.add_argument("--json", action="store_true", help="one JSON object a line")
    resume = commands.add_parser("resume", allow_abbrev=False,
                                 help="settle the pending intents")
    resume.add_argument("--deadline", type=agent_mcp.deadline_seconds, default=None,
                        metavar="SECONDS")
    agent_mcp.add_parser(commands)
    return parser


def _line(outcome) -> str:
    return json.dumps(outcome.as_json(), ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser()
    if any(arg == "--token" or arg.startswith("--token=") for arg in argv):
        parser.error("there is no --token option: the token comes only from SETTLE_TOKEN")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give --url or set SETTLE_URL")
    if args.command == "mcp":
        return agent_mcp.main(args, parser)
    try:
        client = Client(args.url, token=os.environ.get("SETTLE_TOKEN") or None,
                        journal=args.journal)
    except (OSError, sqlite3.Error) as error:
        # Nothing was journaled, so nothing was sent: a usage error, said in one line.
        parser.error(f"the journal cannot be opened ({type(error).__name__}: {error})")
    try:
        if args.command == "post":
            return _post(client, args)
        if args.command == "pending":
            waiting = client.pending()
            for intent in waiting:
                print(json.dumps(intent.as_json()) if args.json
                      else f"{intent.request_id}\t{intent.type}\t{intent.created_at}")
            if not waiting and not args.json:
                # Silence read as "it did nothing"; with --json stdout stays one object a line.
                print(f"no pending intents for {client.base_url}")
            return EXIT_SETTLED
        outcomes = client.resume(deadline=args.deadline)
        for outcome in outcomes:
            print(_line(outcome))
        if any(isinstance(o, Unconfirmed) for o in outcomes):
            return EXIT_UNCONFIRMED
        return EXIT_SETTLED
    finally:
        client.close()


def _post(client: Client, args: argparse.Namespace) -> int:
    actor = {"name": args.actor_name}
    if args.actor_model is not None:
        actor["model"] = args.actor_model
    if args.actor_trigger is not None:
        actor["trigger"] = args.actor_trigger
    try:
        if args.kind == "question":
            settled: Settled = client.post_question(args.title, args.body, actor=actor,
                                                    deadline=args.deadline)
        else:
            settled = client.post_reply(args.parent_id, args.body, actor=actor,
                                        deadline=args.deadline)
    except Unconfirmed as pending:
        print(_line(pending))
        return EXIT_UNCONFIRMED
    except Refused as no:
        print(_line(no))
        return EXIT_REFUSED
    print(_line(settled))
    return EXIT_SETTLED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
