"""settle-agent mcp driven as an MCP host drives it (SPEC 13.1): launched over stdio by the
official SDK's client and by fastmcp's, against a live Settle through the fault-injecting
proxy. After each scenario every intent has exactly one entry or none, and no `settled`
came without its entry."""

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from hosts import AGENT, HOSTS, host_process, kill, launch, official, wait_until_gone
from live import entries_for, new_id, post_long_ago, question_request

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = ["post_question", "post_reply", "list_pending", "resume_pending", "get_thread",
         "list_threads", "list_replies"]


def run(scenario, *args):
    """Run an async scenario to its end (the host's event loop) and return what it did:
    in a thread of its own, since a browser test earlier in this process leaves
    Playwright's event loop on the main thread, where anyio.run refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(anyio.run, scenario, *args).result()


def only_entry(marker: str, answer) -> None:
    """Exactly one entry carries the marker, and a settled answer names it."""
    [entry] = entries_for(marker)
    if answer["outcome"] == "settled":
        assert answer["entry"]["id"] == entry.id
        assert answer.is_error is False


def no_entry(marker: str, answer) -> None:
    assert entries_for(marker) == []
    assert answer["outcome"] != "settled"
    assert answer.is_error is True


@pytest.fixture(params=sorted(HOSTS))
def host(request):
    return HOSTS[request.param]


def test_a_host_sees_seven_tools_each_with_an_input_and_an_output_schema(
    proxy, token, journal, host
):
    async def scenario():
        async with host(proxy.url, token, journal) as mcp:
            return await mcp.tools()

    tools = {tool.name: tool for tool in run(scenario)}

    assert sorted(tools) == sorted(TOOLS)
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema["type"] == "object"
        # The model is never asked for an actor or an id.
        assert not {"actor", "request_id", "submission_mode"} & set(
            tool.input_schema.get("properties", {}))
    assert tools["post_question"].input_schema["required"] == ["title", "body"]
    assert tools["post_reply"].input_schema["required"] == ["parent_id", "body"]
    assert tools["post_reply"].input_schema["properties"]["parent_id"]["type"] == "integer"
    assert tools["post_question"].input_schema["properties"]["new_intent"]["default"] is False
    assert tools["get_thread"].input_schema["required"] == ["id"]
    assert tools["list_replies"].input_schema["required"] == ["thread_id"]
    assert "cursor" in tools["list_threads"].input_schema["properties"]
    assert set(tools["post_question"].output_schema["required"]) >= {
        "outcome", "request_id", "message"}
    assert tools["list_pending"].output_schema["required"] == ["pending"]
    assert tools["resume_pending"].output_schema["required"] == ["outcomes"]
    assert tools["get_thread"].output_schema["required"] == ["http_status", "data"]


@pytest.mark.parametrize("fault, how", [("drop", "replayed"), ("reset", "created")])
def test_a_lost_answer_or_a_reset_is_settled_with_exactly_one_entry(
    proxy, token, journal, host, fault, how
):
    proxy.reset([fault])
    marker = new_id()

    async def scenario():
        async with host(proxy.url, token, journal, "--deadline", "15") as mcp:
            return (await mcp.call("post_question", {"title": "Lost?",
                                                     "body": f"identity {marker}"}),
                    await mcp.call("list_pending"))

    posted, pending = run(scenario)

    assert posted["outcome"] == "settled", posted.content
    assert posted["how"] == how
    assert posted["joined_pending"] is False
    assert posted["message"]
    assert proxy.seen.writes == 2
    only_entry(marker, posted)
    assert pending["pending"] == []


def test_a_model_retrying_after_unconfirmed_joins_the_intent_and_makes_one_entry(
    proxy, token, journal, host
):
    proxy.hold_seconds = 4
    proxy.reset(["hold"] * 20)
    marker = new_id()
    call = {"title": "Held?", "body": f"identity {marker}"}

    async def scenario():
        async with host(proxy.url, token, journal, "--deadline", "2") as mcp:
            first = await mcp.call("post_question", call)
            pending = await mcp.call("list_pending")
            proxy.reset()
            again = await mcp.call("post_question", call)  # the model retries, as told not to
            after = await mcp.call("list_pending")
            once_more = await mcp.call("post_question", call)  # its outcome was reported
            return first, pending, again, after, once_more

    first, pending, again, after, once_more = run(scenario)

    assert first["outcome"] == "unconfirmed"
    assert first.is_error is True
    assert first["reason"] and "retry_after" in first.content
    assert "resume_pending" in first["message"]
    assert pending["pending"] == [{"request_id": first["request_id"], "type": "question",
                                   "title": "Held?",
                                   "created_at": pending["pending"][0]["created_at"]}]
    assert again["outcome"] == "settled"
    assert again["joined_pending"] is True
    assert again["request_id"] == first["request_id"]
    assert again["how"] == "replayed"  # the held attempt had saved it
    assert after["pending"] == []
    # Once the model has been told, the same content again is a deliberate new post.
    assert once_more["outcome"] == "settled" and once_more["joined_pending"] is False
    assert once_more["request_id"] != first["request_id"]
    entries = entries_for(marker)
    assert sorted(e.id for e in entries) == sorted(
        [again["entry"]["id"], once_more["entry"]["id"]])


def test_new_intent_after_unconfirmed_makes_a_second_entry_and_each_intent_has_one(
    proxy, token, journal
):
    proxy.reset(["reset"] * 20)
    marker = new_id()
    call = {"title": "Twice?", "body": f"identity {marker}"}

    async def scenario():
        async with official(proxy.url, token, journal, "--deadline", "1.5") as mcp:
            first = await mcp.call("post_question", call)
            proxy.reset()
            second = await mcp.call("post_question", {**call, "new_intent": True})
            resumed = await mcp.call("resume_pending")
            return first, second, resumed

    first, second, resumed = run(scenario)

    assert first["outcome"] == "unconfirmed"
    assert second["outcome"] == "settled" and second["joined_pending"] is False
    assert second["request_id"] != first["request_id"]
    [outcome] = resumed["outcomes"]
    assert resumed.is_error is False
    assert outcome["request_id"] == first["request_id"]
    assert outcome["outcome"] == "settled" and outcome["how"] == "created"
    entries = entries_for(marker)
    assert sorted(e.id for e in entries) == sorted(
        [second["entry"]["id"], outcome["entry"]["id"]])


def test_a_server_killed_while_a_committed_answer_is_held_is_settled_by_the_next_on_start(
    proxy, token, journal
):
    proxy.hold_seconds = 60
    proxy.reset(["hold"])
    marker = new_id()
    call = {"title": "Killed?", "body": f"identity {marker}"}

    forwarded = []

    async def killed_mid_call():
        async with official(proxy.url, token, journal, "--deadline", "30") as mcp:
            async with anyio.create_task_group() as calls:
                calls.start_soon(mcp.call, "post_question", call)
                forwarded.append(
                    await anyio.to_thread.run_sync(proxy.seen.forwarded.wait, 30))
                kill(journal)
                calls.cancel_scope.cancel()

    try:
        run(killed_mid_call)
    except Exception:  # noqa: BLE001 - the host may see its server die as an error
        pass
    assert forwarded == [True]
    assert len(entries_for(marker)) == 1  # committed, its answer never seen

    async def restarted():
        async with official(proxy.url, token, journal, "--deadline", "10") as mcp:
            for _ in range(100):  # the start-up resume settles it in the background
                pending = await mcp.call("list_pending")
                if not pending["pending"]:
                    break
                await anyio.sleep(0.1)
            # The host retries the call it never got an answer to.
            return pending, await mcp.call("post_question", call)

    proxy.reset()
    pending, retried = run(restarted)

    assert pending["pending"] == []
    assert retried["outcome"] == "settled"
    assert retried["joined_pending"] is True
    assert retried["how"] in {"replayed", "looked_up"}
    only_entry(marker, retried)
    assert proxy.seen.writes == 1  # the start-up resume's; the retry was answered from the journal


def test_a_call_the_host_gave_up_on_reported_nothing_and_the_same_content_joins_it(
    proxy, token, journal
):
    """The host's own timeout (2 s) is below --deadline: it sends notifications/cancelled
    and tells the model to try again, while the call goes on to settle the post."""
    proxy.hold_seconds = 4
    proxy.reset(["hold"])
    marker = new_id()
    call = {"title": "Abandoned?", "body": f"identity {marker}"}

    async def scenario():
        async with official(proxy.url, token, journal, "--deadline", "20") as mcp:
            began = time.monotonic()
            try:
                await mcp.client.call_tool("post_question", call, read_timeout_seconds=2)
            except Exception as error:  # noqa: BLE001 - the host's timeout, whatever its type
                gave_up = (time.monotonic() - began, type(error).__name__)
            else:
                gave_up = None
            # The abandoned call goes on: held 4 s, tried again, settled in the background.
            for _ in range(300):
                if proxy.seen.writes >= 2 and not (await mcp.call("list_pending"))["pending"]:
                    break
                await anyio.sleep(0.1)
            await anyio.sleep(1)  # whatever the abandoned call does after settling, done
            return gave_up, await mcp.call("post_question", call)

    gave_up, again = run(scenario)

    assert gave_up is not None and gave_up[0] < 4, gave_up
    assert again["outcome"] == "settled", again.content
    assert again["joined_pending"] is True
    assert again["how"] == "replayed"
    only_entry(marker, again)
    assert proxy.seen.writes == 2  # the held attempt and its retry; the call sent nothing


def test_a_host_killed_mid_call_reported_nothing_and_the_next_host_joins_the_intent(
    proxy, token, journal
):
    """The host is SIGKILLed while the post's answer is held; its settle-agent, orphaned,
    settles the post and exits. A new host calling with the same content reaches it."""
    proxy.hold_seconds = 2  # the host is killed the moment the write is forwarded
    proxy.reset(["hold"])
    marker = new_id()
    call = {"title": "Orphaned?", "body": f"identity {marker}"}

    host = host_process(proxy.url, token, journal, "post_question", call,
                        "--deadline", "20")
    try:
        assert proxy.seen.forwarded.wait(60)
    finally:
        host.kill()
        host.wait(30)
    assert wait_until_gone(journal, 40)  # the orphan settled the post and exited
    assert len(entries_for(marker)) == 1
    assert proxy.seen.writes == 2  # the held attempt and the orphan's retry

    async def next_host():
        async with official(proxy.url, token, journal) as mcp:
            return await mcp.call("post_question", call)

    again = run(next_host)

    assert again["outcome"] == "settled", again.content
    assert again["joined_pending"] is True
    only_entry(marker, again)
    assert proxy.seen.writes == 2


def test_refusals_carry_the_servers_error_and_save_nothing(proxy, token, journal):
    long_title, marker, orphan = "x" * 201, new_id(), new_id()

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            invalid = await mcp.call("post_question", {"title": long_title,
                                                       "body": f"identity {marker}"})
            unavailable = await mcp.call("post_reply", {"parent_id": 2_000_000_000,
                                                        "body": f"identity {orphan}"})
            return invalid, unavailable

    invalid, unavailable = run(scenario)

    assert (invalid["outcome"], invalid["status"], invalid["code"]) == (
        "refused", 422, "invalid_request")
    assert invalid["details"]["code"] == "invalid_request"
    assert invalid["details"]["message"]  # the server's, as it answered
    assert any(f["field"] == "title" for f in invalid["details"]["fields"])
    assert invalid["details"]["message"] in invalid["message"]
    no_entry(marker, invalid)
    assert (unavailable["status"], unavailable["code"]) == (422, "parent_unavailable")
    no_entry(orphan, unavailable)


def test_a_409_conflict_is_a_refusal_reported_once(proxy, token, journal):
    proxy.reset(["reset"] * 20)
    marker = new_id()

    async def unconfirmed():
        async with official(proxy.url, token, journal, "--deadline", "1") as mcp:
            return await mcp.call("post_question", {"title": "Mine?",
                                                    "body": f"identity {marker}"})

    first = run(unconfirmed)
    assert first["outcome"] == "unconfirmed"
    # Another client saved other content under that id meanwhile.
    other = question_request(first["request_id"], "Theirs", f"other {marker}", {"name": "x"})
    post_long_ago(token, other, hours=0.01)
    proxy.reset()

    async def retried():
        async with official(proxy.url, token, journal, "--deadline", "5") as mcp:
            return (await mcp.call("post_question", {"title": "Mine?",
                                                     "body": f"identity {marker}"}),
                    await mcp.call("list_pending"))

    refused, pending = run(retried)

    # Settled by this call or, first, by the start-up resume: either way reported here.
    assert refused["joined_pending"] is True
    assert refused["request_id"] == first["request_id"]
    assert (refused["outcome"], refused["status"], refused["code"]) == (
        "refused", 409, "conflict")
    assert refused.is_error is True
    assert "body" in refused["details"]["conflicting_fields"]
    assert "saved nothing" not in refused["message"]  # something is saved under that id
    assert pending["pending"] == []
    [entry] = entries_for(marker)
    assert entry.body == f"other {marker}"


def test_reads_answer_as_settle_answered(proxy, token, journal):
    marker = new_id()

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            asked = await mcp.call("post_question", {"title": "Read?",
                                                     "body": f"identity {marker}"})
            question = asked["entry"]["id"]
            await mcp.call("post_reply", {"parent_id": question, "body": f"reply {marker}"})
            return (await mcp.call("get_thread", {"id": question}),
                    await mcp.call("list_threads", {}),
                    await mcp.call("list_replies", {"thread_id": question}),
                    await mcp.call("get_thread", {"id": 2_000_000_000}),
                    await mcp.call("list_threads", {"cursor": "not-a-cursor"}),
                    # 1.0 is an integer to JSON Schema, so to the tool too
                    await mcp.call("get_thread", {"id": float(question)}))

    thread, threads, replies, missing, bad_cursor, as_float = run(scenario)

    assert thread["http_status"] == 200 and thread.is_error is False
    assert thread["data"]["reply_count"] == 1
    assert threads["http_status"] == 200 and "next_cursor" in threads["data"]
    [reply] = replies["data"]["items"]
    assert reply["body"] == f"reply {marker}"
    assert (missing["http_status"], missing.is_error) == (404, True)
    assert missing["data"]["error"]["code"] == "not_found"
    assert (bad_cursor["http_status"], bad_cursor.is_error) == (400, True)
    assert as_float.content == thread.content


def test_the_journal_is_private_and_holds_no_token(proxy, token, tmp_path):
    journal = tmp_path / "deep" / "state" / "journal.sqlite3"
    previous = os.umask(0)  # the server inherits it

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            return await mcp.call("post_question", {"title": "Private?",
                                                    "body": f"identity {new_id()}"})

    try:
        (tmp_path / "deep").mkdir()
        os.chmod(tmp_path / "deep", 0o700)
        posted = run(scenario)
    finally:
        os.umask(previous)

    assert posted["outcome"] == "settled"
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
    for side in journal.parent.iterdir():
        assert stat.S_IMODE(side.stat().st_mode) == 0o600, side
    assert token.encode() not in journal.read_bytes()


def _rpc(id_: int, method: str, params: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n"


def test_stdout_carries_only_mcp_messages_and_the_token_and_body_are_in_no_output(
    proxy, token, journal
):
    """A raw host: JSON-RPC lines in, every stdout line must be a JSON-RPC message."""
    proxy.reset(["drop", "hold"])
    proxy.hold_seconds = 3
    body = f"secret body {new_id()}"
    args, env = launch(proxy.url, token, journal, "--deadline", "8")
    lines = [
        _rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw-host", "version": "1"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",
        _rpc(2, "tools/list", {}),
        _rpc(3, "tools/call", {"name": "post_question",
                               "arguments": {"title": "Raw?", "body": body}}),
        _rpc(4, "tools/call", {"name": "list_threads", "arguments": {}}),
    ]
    process = subprocess.Popen([AGENT, *args], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers = []
    for line in lines:
        process.stdin.write(line)
        process.stdin.flush()
        if '"id"' in line:
            answers.append(json.loads(process.stdout.readline()))
    rest, stderr = process.communicate(timeout=30)

    assert process.returncode == 0
    assert [a["id"] for a in answers] == [1, 2, 3, 4]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert [line for line in rest.splitlines() if line.strip()] == []
    posted = answers[2]["result"]["structuredContent"]
    assert posted["outcome"] == "settled"
    printed = json.dumps(answers)
    assert token not in printed
    assert token not in stderr and body not in stderr
    assert posted["request_id"] in stderr  # logs name ids


@pytest.mark.parametrize("args, env", [
    ([], {}),  # no URL
    (["--url", "http://127.0.0.1:9", "--bogus"], {}),
    (["--url", "http://127.0.0.1:9", "--token", "t"], {}),
    (["--url", "http://127.0.0.1:9", "--deadline", "soon"], {}),
    (["--url", "http://127.0.0.1:9", "--submission-mode", "robot"], {}),
    (["--url", "http://127.0.0.1:9", "--deadline", "0"], {}),
    (["--url", "127.0.0.1:9"], {}),  # every call would fail once served
    (["--url", "ftp://127.0.0.1:9"], {}),
    (["--url", "http://127.0.0.1:9", "--actor-name", ""], {}),
])
def test_usage_errors_exit_2_with_one_line_on_stderr_before_serving(tmp_path, args, env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SETTLE_")}
    done = subprocess.run([AGENT, "mcp", "--journal", str(tmp_path / "j.sqlite3"), *args],
                          env=environment, input="", capture_output=True, text=True,
                          timeout=30)

    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_first_tool_answer_comes_soon_after_the_host_launches_it(proxy, token, journal):
    async def scenario():
        began = time.monotonic()
        async with official(proxy.url, token, journal) as mcp:
            await mcp.call("list_pending")
            return time.monotonic() - began

    took = run(scenario)

    print(f"launch to first tool answer: {took:.2f} s")
    assert took < 20


def test_the_documented_example_posts_one_question_through_the_server(proxy, token, journal):
    example = Path(__file__).resolve().parents[2] / "examples" / "agent_mcp_stdio.py"
    marker = new_id()
    env = {**os.environ, "SETTLE_URL": proxy.url, "SETTLE_TOKEN": token,
           "PATH": f"{Path(AGENT).parent}:{os.environ.get('PATH', '')}"}

    done = subprocess.run([sys.executable, str(example), "From the example?",
                           f"identity {marker}", "--journal", str(journal)],
                          env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["outcome"] == "settled"
    [entry] = entries_for(marker)
    assert printed["entry"]["id"] == entry.id
    assert "post_question" in done.stderr


def test_a_journal_made_before_the_reported_column_gets_it_and_its_intent_is_settled_on_start(
    proxy, token, journal
):
    from datetime import UTC, datetime

    from settle_client.journal import SCHEMA, token_digest

    journal.parent.mkdir(mode=0o700)
    request_id = new_id()
    request = question_request(request_id, "Old?", f"identity {request_id}", {"name": "agent"})
    with sqlite3.connect(journal) as db:  # the journal of a client without the column
        db.execute(SCHEMA)
        db.execute("INSERT INTO intents (base_url, token_digest, request_id, type, body,"
                   " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (proxy.url, token_digest(token), request_id, "question",
                    json.dumps(request), datetime.now(UTC).isoformat()))

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            for _ in range(100):
                if not (await mcp.call("list_pending"))["pending"]:
                    break
                await anyio.sleep(0.1)
            return await mcp.call("post_question", {"title": "Old?",
                                                    "body": f"identity {request_id}"})

    joined = run(scenario)

    with sqlite3.connect(journal) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(intents)")}
        [reported] = db.execute("SELECT reported FROM intents").fetchone()
    assert "reported" in columns
    assert (joined["outcome"], joined["joined_pending"], joined["request_id"]) == (
        "settled", True, request_id)
    assert reported == 1
    only_entry(request_id, joined)


def test_arguments_the_model_gets_wrong_are_answered_as_results_never_as_errors(
    proxy, token, journal
):
    """What the server can judge it judges (its 422, refused); what it cannot (a read's
    path, the agent's own fields) is answered here. Every result fits its outputSchema."""
    marker, mine = new_id(), new_id()

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            return (await mcp.call("post_question", {"title": "Tagged?", "tags": ["x"],
                                                     "body": f"identity {marker}"}),
                    await mcp.call("post_question", {"title": "Mine?", "request_id": mine,
                                                     "actor": {"name": "someone-else"},
                                                     "body": f"identity {mine}"}),
                    await mcp.call("post_reply", {"parent_id": "1", "body": "string id"}),
                    await mcp.call("get_thread", {"id": "abc"}),
                    await mcp.call("get_thread", {}),
                    await mcp.call("list_replies", {"thread_id": 1, "cursor": 5}),
                    await mcp.call("list_threads", {"page": 2}))

    unknown, own, string_id, *reads = run(scenario)

    assert (unknown["outcome"], unknown["status"], unknown["code"]) == (
        "refused", 422, "invalid_request")
    assert [f["field"] for f in unknown["details"]["fields"]] == ["tags"]
    no_entry(marker, unknown)
    # The request_id and the actor are the agent's: the model's are not sent.
    assert own["outcome"] == "settled" and own["request_id"] != mine
    assert own["entry"]["actor"]["name"] == "agent"
    assert (string_id["status"], string_id["details"]["fields"][0]["field"]) == (
        422, "parent_id")
    for read in reads:
        assert (read["http_status"], read.is_error) == (None, True), read.content
        assert read["data"]["error"]["code"] == "invalid_arguments"
        assert read["data"]["error"]["message"]


def test_a_refusal_answered_from_the_journal_carries_the_servers_message(
    proxy, token, journal
):
    """Refused by the start-up resume, unreported, then joined by the model's call: the
    answer comes from the journal and still carries the server's error as it answered."""
    from datetime import UTC, datetime

    from settle_client.journal import SCHEMA, token_digest

    journal.parent.mkdir(mode=0o700)
    request_id, title = new_id(), "x" * 201
    request = question_request(request_id, title, f"identity {request_id}", {"name": "agent"})
    with sqlite3.connect(journal) as db:
        db.execute(SCHEMA)
        db.execute("INSERT INTO intents (base_url, token_digest, request_id, type, body,"
                   " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (proxy.url, token_digest(token), request_id, "question",
                    json.dumps(request), datetime.now(UTC).isoformat()))

    async def scenario():
        async with official(proxy.url, token, journal) as mcp:
            for _ in range(100):
                if not (await mcp.call("list_pending"))["pending"]:
                    break
                await anyio.sleep(0.1)
            return await mcp.call("post_question", {"title": title,
                                                    "body": f"identity {request_id}"})

    joined = run(scenario)

    assert (joined["outcome"], joined["joined_pending"], joined["request_id"]) == (
        "refused", True, request_id)
    assert joined["details"]["code"] == "invalid_request"
    assert "200" in joined["details"]["message"]  # the server's words, kept by the journal
    assert joined["details"]["fields"][0]["field"] == "title"
    assert joined["details"]["message"] in joined["message"]
    no_entry(request_id, joined)


def test_with_settle_unreachable_posts_are_unconfirmed_and_reads_say_so_in_their_shape(
    token, journal
):
    """Nothing answers: a post is unconfirmed and pending as the model gave it (a string
    parent_id, a missing title), and list_pending and a read still fit their schemas."""

    async def scenario():
        async with official("http://127.0.0.1:9", token, journal, "--deadline", "1") as mcp:
            return (await mcp.call("post_reply", {"parent_id": "7", "body": "string id"}),
                    await mcp.call("post_question", {"body": "no title"}),
                    await mcp.call("list_pending"),
                    await mcp.call("get_thread", {"id": 1}))

    reply, question, pending, read = run(scenario)

    assert (reply["outcome"], question["outcome"]) == ("unconfirmed", "unconfirmed")
    assert reply["reason"] and reply.is_error is True
    assert pending.is_error is False
    shown = {p["request_id"]: p for p in pending["pending"]}
    assert shown[reply["request_id"]]["parent_id"] == "7"
    assert shown[question["request_id"]]["title"] is None
    assert (read["http_status"], read.is_error) == (None, True)
    assert read["data"]["error"]["code"] == "no_answer"


def test_the_actor_comes_from_the_environment_or_the_options_and_the_mode_defaults(
    proxy, token, journal
):
    env = {"SETTLE_ACTOR_NAME": "env-bot", "SETTLE_ACTOR_MODEL": "model-e",
           "SETTLE_ACTOR_TRIGGER": "cron"}

    async def scenario(*options):
        async with official(proxy.url, token, journal, *options, **env) as mcp:
            return await mcp.call("post_question", {"title": "Who?",
                                                    "body": f"identity {new_id()}"})

    from_env = run(scenario)
    from_options = run(scenario, "--actor-name", "opt-bot", "--actor-model", "model-o",
                       "--submission-mode", "user_requested")

    assert from_env["entry"]["actor"] == {"name": "env-bot", "model": "model-e",
                                          "trigger": "cron"}
    assert from_env["entry"]["submission_mode"] == "autonomous"
    assert from_options["entry"]["actor"] == {"name": "opt-bot", "model": "model-o",
                                              "trigger": "cron"}
    assert from_options["entry"]["submission_mode"] == "user_requested"
