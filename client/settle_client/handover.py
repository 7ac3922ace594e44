"""The stdio channel between settle-agent mcp and its host, and when a result is handed over.

SPEC 13.1: a tool result reports an intent's outcome only once it has been handed to the
host: written and flushed to stdout, with stdin still open and no notifications/cancelled
received for that request first. A call the host abandoned, or whose host is gone,
reported nothing, whatever it went on to settle, so the model's retry joins the intent.

The official SDK's server writes a result after call_tool has returned, on the stream this
module serves; so the mark is made here, after the flush, not where the result is built.
This is the SDK's stdio_server with that one addition; like it, it points fd 0 at the null
device and fd 1 at stderr while serving, so nothing else in the process reaches the wire.
"""

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio

logger = logging.getLogger("settle_client")


def _key(rpc_id: Any) -> Any:
    # "7" and 7 are one request to the SDK's dispatcher, so to the cancellation here too.
    if isinstance(rpc_id, str):
        try:
            return int(rpc_id)
        except ValueError:
            pass
    return rpc_id


class Handover:
    """Which results carry outcomes still to be marked reported, and whether each reached
    the host. Used from the serving event loop only."""

    def __init__(self, mark_reported: Callable[[list[str]], None]) -> None:
        self.mark_reported = mark_reported
        self.host_gone = False
        self._awaiting: dict[Any, list[str]] = {}
        self._cancelled: set[Any] = set()
        # Held while a result is written and marked: the host's next request (the same
        # content posted again on purpose, once it has read the result) waits for the
        # mark, or it would join the intent it has just been told about.
        self.marking = anyio.Lock()

    def expect(self, rpc_id: Any, request_ids: list[str]) -> None:
        """The result about to be written for rpc_id reports these intents."""
        if request_ids and _key(rpc_id) not in self._cancelled:
            self._awaiting[_key(rpc_id)] = request_ids

    def asked(self, rpc_id: Any) -> None:
        # A new request may reuse an id an earlier, cancelled one had.
        self._cancelled.discard(_key(rpc_id))

    def cancelled(self, rpc_id: Any) -> None:
        self._cancelled.add(_key(rpc_id))
        self._awaiting.pop(_key(rpc_id), None)

    def reports(self, message: Any) -> list[str]:
        """The intents a message written to the host would report (a response only)."""
        rpc_id = getattr(message, "id", None)
        if rpc_id is None or not hasattr(message, "result"):
            return []
        return self._awaiting.get(_key(rpc_id), [])

    async def handed(self, message: Any) -> None:
        """The message was written and flushed: mark what it reports, unless the host
        cancelled the request or went away first."""
        key = _key(message.id)
        told = self._awaiting.pop(key, [])
        if not told or self.host_gone or key in self._cancelled:
            logger.info("result for %s not handed to the host: %d outcome(s) stay "
                        "unreported", message.id, len(told))
            return
        try:
            await anyio.to_thread.run_sync(self.mark_reported, told)
        except Exception:  # noqa: BLE001 - unmarked is the safe side: a retry joins it
            logger.exception("could not mark %d outcome(s) reported", len(told))


def _divert(fd: int, flags: int, to: int | None) -> int:
    """A private copy of fd for the wire, and fd pointed elsewhere (to, else the null
    device): a stray print or read cannot tear a JSON-RPC line."""
    wire = os.dup(fd)
    target = to if to is not None else os.open(os.devnull, flags)
    os.dup2(target, fd)
    if to is None:
        os.close(target)
    return wire


@asynccontextmanager
async def stdio_handing_over(handover: Handover) -> AsyncIterator[tuple[Any, Any]]:
    """The (read_stream, write_stream) pair Server.run takes, over this process's stdio."""
    import mcp_types as types
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    wire_in = _divert(0, os.O_RDONLY, None)
    wire_out = _divert(1, os.O_WRONLY, sys.stderr.fileno())
    stdin = anyio.wrap_file(TextIOWrapper(os.fdopen(wire_in, "rb", closefd=False),
                                          encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(os.fdopen(wire_out, "wb", closefd=False),
                                           encoding="utf-8"))
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)

    async def from_host() -> None:
        try:
            async with read_writer:
                async for line in stdin:
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(
                            line, by_name=False)
                    except Exception as error:  # noqa: BLE001 - the SDK answers it
                        await read_writer.send(error)
                        continue
                    method = getattr(message, "method", None)
                    if method == "notifications/cancelled":
                        params = getattr(message, "params", None) or {}
                        if isinstance(params, dict) and "requestId" in params:
                            handover.cancelled(params["requestId"])
                    elif method is not None and getattr(message, "id", None) is not None:
                        handover.asked(message.id)
                        async with handover.marking:
                            pass
                    await read_writer.send(SessionMessage(message))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()
        finally:
            handover.host_gone = True

    async def to_host() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    line = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    if not handover.reports(message):
                        await _write(line)
                        continue
                    async with handover.marking:
                        if await _write(line):
                            await handover.handed(message)
                        else:
                            handover.cancelled(message.id)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def _write(line: str) -> bool:
        if stdout_broken:
            return False
        try:
            await stdout.write(line)
            await stdout.flush()
        except (OSError, ValueError):
            # A broken stdout: the host is gone. Go on draining what the server writes,
            # so it is not blocked, and hand over nothing more.
            stdout_broken.append(True)
            handover.host_gone = True
            return False
        return True

    stdout_broken: list[bool] = []
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(from_host)
            tasks.start_soon(to_host)
            yield read_stream, write_stream
    finally:
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
