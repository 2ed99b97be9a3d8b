"""`lore-sidecar mcp` through the official MCP client over stdio: the tools, their refusals
(worded as docs/mcp.md says), a follower's durable writes, usage per runtime, and failing
open against a hung or unusable store."""

from __future__ import annotations

import re
import sqlite3
import time

import anyio
import jsonschema
import pytest

from bench.fleet import Fleet
from lore_sidecar.mcp_face.tools import runtime_of
from tests.support.mcp_client import mcp_session, refusal, text

TOOLS = {"lore_recall", "lore_get_node", "lore_search", "lore_list_domains", "lore_create_node", "lore_update_node",
         "lore_move_node", "lore_delete_node", "lore_retain", "lore_forget", "lore_query_facts", "lore_assert_fact",
         "lore_invalidate_fact", "lore_timeline", "lore_ask"}


def ids_of(recall_text: str) -> tuple[str, list[str]]:
    query_id = re.search(r'query_id="([^"]+)"', recall_text).group(1)
    return query_id, re.findall(r"^\d+\. (\S+) \[", recall_text, re.M)


async def test_every_tool_is_listed_with_a_valid_input_schema(tmp_path, workspace):
    async with mcp_session(tmp_path / "store", workspace) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object" and len(tool.description or "") > 40, tool.name
        assert set(tool.input_schema.get("required", [])) <= set(tool.input_schema["properties"]), tool.name
    assert tools["lore_get_node"].input_schema["required"] == ["uri"]
    assert {"uri", "session_id", "query_id"} <= set(tools["lore_get_node"].input_schema["properties"])


async def test_nodes_are_resources_and_remembering_a_decision_is_a_prompt(tmp_path, workspace):
    async with mcp_session(tmp_path / "store", workspace) as s:
        await text(s, "lore_create_node", {"uri": "project://proj/decision/db", "content": "SQLite in WAL mode"})
        templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
        assert "project://{project}/{category}/{slug}" in templates
        read = await s.read_resource("project://proj/decision/db")
        assert "SQLite in WAL mode" in read.contents[0].text
        with pytest.raises(Exception, match="no such node"):
            await s.read_resource("project://proj/decision/nope")
        prompt = await s.get_prompt("remember_decision", {"decision": "use WAL", "why": "readers never block"})
        assert "lore_retain" in prompt.messages[0].content.text and "readers never block" in prompt.messages[0].content.text


async def test_knowledge_and_facts_round_trip_through_the_tools(tmp_path, workspace):
    store = tmp_path / "store"
    uri = "project://proj/decision/queue"
    async with mcp_session(store, workspace, "--harness", "agent-a") as s:
        assert "version 1" in await text(s, "lore_create_node", {
            "uri": uri, "content": "Jobs go through the Redis queue, never cron", "category": "decision"})
        leads = await text(s, "lore_recall", {"query": "redis queue jobs", "session_id": "sess-1"})
        query_id, uris = ids_of(leads)
        assert uris[0] == uri and 'session_id="sess-1"' in leads
        opened = await text(s, "lore_get_node", {"uri": uri, "query_id": query_id, "session_id": "sess-1"})
        assert "never cron" in opened and "category: decision" in opened
        assert "version 2" in await text(s, "lore_update_node", {"uri": uri, "content": "Jobs: Redis queue (RQ)",
                                                                  "expected_version": 1})
        assert "project://proj/architecture/queue" in await text(s, "lore_move_node", {
            "uri": uri, "new_uri": "project://proj/architecture/queue"})
        browse = await text(s, "lore_search", {"query": "*", "domain": "project://proj"})
        assert "project://proj/architecture/queue" in browse and "Redis queue (RQ)" in browse
        assert "project://proj/architecture/queue" in await text(s, "lore_search", {"query": "redis"})
        assert "No knowledge nodes in project://elsewhere" in await text(s, "lore_search", {"domain": "project://elsewhere"})
        assert "project://proj [project, 1 nodes" in await text(s, "lore_list_domains")
        kept = await text(s, "lore_retain", {"content": "Prefer small PRs", "title": "small prs", "category": "preference"})
        kept_uri = re.search(r"retained (\S+)", kept).group(1)
        assert "forgot" in await text(s, "lore_forget", {"uri": kept_uri, "reason": "team changed its mind"})
        assert "No memory matches" in await text(s, "lore_recall", {"query": "small PRs", "sources": ["knowledge"]})
        assert "deleted" in await text(s, "lore_delete_node", {"uri": "project://proj/architecture/queue"})

        assert "recorded fact://" in await text(s, "lore_assert_fact", {
            "subject": "api", "predicate": "listens on", "object": "port 8080", "valid_from": "2026-01-01"})
        await text(s, "lore_assert_fact", {"subject": "api", "predicate": "listens on", "object": "port 9090",
                                           "valid_from": "2026-06-01"})
        now = await text(s, "lore_query_facts", {"subject": "api"})
        assert "port 9090" in now and "port 8080" not in now
        then = await text(s, "lore_query_facts", {"subject": "api", "as_of": "2026-03-01"})
        assert "port 8080" in then and "port 9090" not in then
        assert "closed fact://" in await text(s, "lore_invalidate_fact", {"subject": "api", "predicate": "listens on"})
        events = await text(s, "lore_timeline", {"subject": "api"})
        assert events.index("port 8080") < events.index("port 9090") < events.index("closed api")
    # Usage is attributed to the runtime the server was started for.
    fleet = Fleet(store, workspace, watch=False, indexWorkspace=False)
    try:
        usage = fleet.spawn().request("lore/status")["usage"]
    finally:
        fleet.close()
    assert usage["recalled"].get("agent-a", 0) >= 1 and usage["used"].get("agent-a") == 1


@pytest.mark.parametrize("client_name, runtime", [("claude-code", "claude-code"), ("codex-mcp-client", "codex")])
async def test_the_clients_own_name_names_the_runtime(tmp_path, workspace, client_name, runtime):
    store = tmp_path / "store"
    async with mcp_session(store, workspace, client_name=client_name) as s:
        await text(s, "lore_create_node", {"uri": "project://proj/gotcha/tz", "content": "Timestamps are UTC"})
        query_id, _ = ids_of(await text(s, "lore_recall", {"query": "timestamps utc"}))
        await text(s, "lore_get_node", {"uri": "project://proj/gotcha/tz", "query_id": query_id})
    fleet = Fleet(store, workspace, watch=False, indexWorkspace=False)
    try:
        usage = fleet.spawn().request("lore/status")["usage"]
    finally:
        fleet.close()
    assert usage["used"] == {runtime: 1} and usage["recalled"] == {runtime: 1}


def test_runtime_names_flag_first_then_known_clients_then_the_clients_name():
    assert runtime_of("claude-code", "pi") == "pi"
    assert runtime_of("codex-mcp-client", None) == "codex"
    assert runtime_of("Zed Editor", None) == "zed-editor"
    assert runtime_of(None, None) == "mcp"


async def test_refusals_come_back_as_tool_errors_beside_the_same_call_succeeding(tmp_path, workspace):
    async with mcp_session(tmp_path / "store", workspace) as s:
        for i in range(5):
            await text(s, "lore_create_node", {"uri": f"project://proj/decision/d{i}", "content": f"rule {i}", "priority": 0})
        over = await refusal(s, "lore_create_node", {"uri": "project://proj/decision/d5", "content": "rule 5", "priority": 0})
        assert "already has 5 priority-0 nodes (the budget is 5)" in over and "[priorityBudget]" in over
        assert "version 1" in await text(s, "lore_create_node", {"uri": "project://proj/decision/d5", "content": "rule 5",
                                                                 "priority": 1})
        bad = await refusal(s, "lore_create_node", {"uri": "no scheme here", "content": "x"})
        assert "[invalidUri]" in bad
        outside = await refusal(s, "lore_create_node", {"uri": "project://proj/gotcha/p", "content": "x",
                                                        "sources": ["../../../etc/passwd"]})
        assert "outside the workspace" in outside and "[outsideWorkspace]" in outside
        assert "version 1" in await text(s, "lore_create_node", {"uri": "project://proj/gotcha/p", "content": "x",
                                                                 "sources": ["README.md"]})
        stale = await refusal(s, "lore_update_node", {"uri": "project://proj/gotcha/p", "content": "y", "expected_version": 7})
        assert "is at version 1, not 7 [versionConflict]" in stale
        assert "version 2" in await text(s, "lore_update_node", {"uri": "project://proj/gotcha/p", "content": "y",
                                                                 "expected_version": 1})
        shape = await refusal(s, "lore_recall", {"query": "x", "limit": 0})
        assert "limit" in shape
        assert "[nodeExists]" in await refusal(s, "lore_move_node", {"uri": "project://proj/decision/d4",
                                                                    "new_uri": "project://proj/decision/d5"})
        assert "[notFound]" in await refusal(s, "lore_get_node", {"uri": "project://proj/decision/nope"})
        assert "[notFound]" in await refusal(s, "lore_forget", {"uri": "project://proj/decision/nope"})
        when = await refusal(s, "lore_assert_fact", {"subject": "api", "predicate": "port", "object": "1",
                                                     "valid_from": "last tuesday"})
        assert "validFrom" in when or "valid_from" in when
        assert "recorded fact://" in await text(s, "lore_assert_fact", {"subject": "api", "predicate": "port",
                                                                        "object": "1", "valid_from": "2026-01-02"})
        # The server is still there after every refusal.
        assert "rule 5" in await text(s, "lore_get_node", {"uri": "project://proj/decision/d5"})


async def test_a_followers_write_is_durable_at_once_and_applied_once(tmp_path, workspace):
    store = tmp_path / "store"
    fleet = Fleet(store, workspace, watch=False, indexWorkspace=False)
    try:
        writer = fleet.spawn()
        assert writer.request("lore/status")["role"] == "writer"
        uri = "project://proj/pattern/retries"
        # applyWaitMs 0: the follower acknowledges once the op is in its fsynced spool, and
        # exits right away - before the writer applied it.
        # writerStaleMs 60 s: a writer silent for the default 5 s on a loaded machine was
        # replaced by this session, which then applied the write itself (not a follower's path).
        async with mcp_session(store, workspace, env={"LORE_APPLY_WAIT_MS": "0", "LORE_WRITER_STALE_MS": "60000"}) as s:
            said = await text(s, "lore_create_node", {"uri": uri, "content": "Retry with jittered backoff"})
        assert "accepted and made durable" in said
        deadline = time.monotonic() + 20
        while writer.request_full("lore/getNode", {"uri": uri}).get("error"):
            assert time.monotonic() < deadline, "the writer never applied the follower's write"
            time.sleep(0.2)
        entries = writer.request("lore/nodeHistory", {"uri": uri})["entries"]
        assert [e["action"] for e in entries] == ["create"]
        assert writer.request("lore/getNode", {"uri": uri})["content"] == "Retry with jittered backoff"
    finally:
        fleet.close()


async def test_a_hung_store_gives_a_tool_error_within_5_s_and_the_agent_goes_on(tmp_path, workspace):
    store = tmp_path / "store"
    async with mcp_session(store, workspace) as s:  # makes the store
        await text(s, "lore_create_node", {"uri": "project://proj/gotcha/x", "content": "the walrus is blue"})
    lock = sqlite3.connect(store / "lore.db", timeout=0, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # a process wedged inside a write transaction
    try:
        async with mcp_session(store, workspace) as s:
            started = time.monotonic()
            with anyio.fail_after(15):  # without the bound the call would wait as long as the lock
                hung = await refusal(s, "lore_recall", {"query": "walrus"})
            took = time.monotonic() - started
            assert "did not answer within" in hung and took < 5.0, (took, hung)
            lock.execute("ROLLBACK")
            deadline = time.monotonic() + 30
            while True:  # the same call succeeds once the store is free again, in the same server
                r = await s.call_tool("lore_recall", {"query": "walrus"})
                if not r.is_error:
                    assert "project://proj/gotcha/x" in r.content[0].text
                    break
                assert time.monotonic() < deadline, r.content[0].text
    finally:
        lock.close()


async def test_an_unusable_store_gives_a_tool_error_at_once(tmp_path, workspace):
    not_a_store = tmp_path / "store-is-a-file"
    not_a_store.write_text("x")
    async with mcp_session(not_a_store, workspace) as s:
        started = time.monotonic()
        dead = await refusal(s, "lore_recall", {"query": "walrus"})
        assert "is a file" in dead and time.monotonic() - started < 5.0
        assert "is a file" in await refusal(s, "lore_list_domains", {})  # still answering
    async with mcp_session(tmp_path / "store", workspace) as s:  # control: a usable store answers
        assert "No memory matches" in await text(s, "lore_recall", {"query": "walrus"})


def _handshake(store, workspace, *, then=()):
    """Raw lines: initialize, initialized, tools/list, then `then`; every reply line by id."""
    import json
    import subprocess
    import sys

    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "codex-mcp-client", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, *then]
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "mcp", "--store-dir", str(store)], cwd=workspace,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    replies: dict[int, list[str]] = {}
    try:
        for m in msgs:
            proc.stdin.write((json.dumps(m) + "\n").encode())
            proc.stdin.flush()
            if "id" in m:
                line = proc.stdout.readline().decode()
                replies.setdefault(json.loads(line)["id"], []).append(line)
        proc.stdin.close()
        rest = proc.stdout.read().decode()  # nothing more may come: no second reply to anything
        for line in filter(None, rest.splitlines()):
            replies.setdefault(json.loads(line).get("id"), []).append(line)
    finally:
        proc.kill()
        proc.wait()
    return replies


def test_a_kept_handshake_answers_the_next_start_at_once_and_the_session_still_works(tmp_path, workspace):
    import json

    store = tmp_path / "store"
    first = _handshake(store, workspace)
    # The SDK answered (its compact JSON), and its answers were kept for the next start.
    assert '"jsonrpc":"2.0"' in first[1][0] and len(list((store / "mcp").glob("handshake-*.json"))) == 1
    create = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "lore_create_node", "arguments": {"uri": "project://proj/decision/db", "content": "SQLite in WAL mode"}}}
    second = _handshake(store, workspace, then=[create])
    # Answered from the kept handshake (written by this package, not the SDK), once per request,
    # with the same content; the SDK's own session is set up all the same: the tool call works.
    assert '"jsonrpc": "2.0"' in second[1][0]
    assert {k: len(v) for k, v in second.items()} == {1: 1, 2: 1, 3: 1}
    for rid in (1, 2):
        assert json.loads(second[rid][0])["result"] == json.loads(first[rid][0])["result"]
    assert "version 1" in json.loads(second[3][0])["result"]["content"][0]["text"]


# -- hunt round 7b (tools/rounds/2026-12-07-hunt7b.py) ------------------------------------------------

async def test_a_capped_recall_says_the_offset_of_the_rest_and_lore_recall_takes_it(tmp_path, workspace):
    """docs/mcp.md: "a capped list says how many it left out and the `offset` for the rest".
    A model follows it: lore_recall with that offset gives the next leads. Walking the pages
    one lead at a time gives the leads of one call with room for all of them, in order, each
    once, and the last page says no more. The same holds for lore_query_facts."""
    async with mcp_session(tmp_path / "store", workspace) as s:
        for k, what in enumerate(("alpha", "beta", "gamma", "delta")):
            await text(s, "lore_create_node", {"uri": f"project://proj/pattern/walrus-{what}",
                                               "content": f"The walrus {what} tusk rule number {k}"})
            await text(s, "lore_assert_fact", {"subject": "walrus", "predicate": f"tusk-{what}", "object": str(k)})
        _, everything = ids_of(await text(s, "lore_recall", {"query": "walrus tusk rule", "sources": ["knowledge"],
                                                             "limit": 50}))
        assert len(everything) == 4  # the control: one call holds them all
        walked, offset, pages = [], 0, 0
        while offset is not None and pages < 10:
            page = await text(s, "lore_recall", {"query": "walrus tusk rule", "sources": ["knowledge"], "limit": 1,
                                                 "offset": offset})
            walked += ids_of(page)[1]
            said = re.search(r"repeat with offset=(\d+)", page)
            offset, pages = (int(said.group(1)) if said else None), pages + 1
        assert walked == everything and pages == 4
        facts_all = await text(s, "lore_query_facts", {"subject": "walrus", "limit": 50})
        lines = [x for x in facts_all.splitlines() if "tusk-" in x]
        assert len(lines) == 4 and "More facts exist" not in facts_all
        seen, offset = [], 0
        while offset is not None and len(seen) < 10:
            page = await text(s, "lore_query_facts", {"subject": "walrus", "limit": 3, "offset": offset})
            seen += [x for x in page.splitlines() if "tusk-" in x]
            said = re.search(r"repeat with offset=(\d+)", page)
            offset = int(said.group(1)) if said else None
        assert seen == lines
