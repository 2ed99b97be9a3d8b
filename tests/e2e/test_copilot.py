"""GitHub Copilot CLI, the real program, set up with `lore-sidecar install copilot` alone,
offline against the fake model server (bring-your-own-key mode). Session 1: the model saves
a decision with lore's MCP tool and runs a shell command. Session 2: lore's `<recall>` lead
for the decision is in the request the model receives, the model opens it with
lore_get_node and the lead's ids, and `lore/status` counts it recalled and used under
`copilot`; the command's output from session 1 is recallable, and session 1's transcript
end (the assistant's last reply, only in events.jsonl) is in the store."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.e2e import test_mcp_harnesses as mcp
from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow

NOTES = "the walrus cache key rotates every Tuesday\n"
LAST_REPLY = "Saved, and the notes are shown."


def reply(api: str, body: dict):
    """Session 1: lore_create_node, then `cat NOTES.md`, then a closing reply; session 2 as
    the MCP harness tests script it (lore_get_node with the recall block's ids)."""
    text = json.dumps(body)
    answered = [m for m in body.get("messages", []) if m.get("role") == "tool"]
    if "How do our deploys" not in text and "Save this decision" in text:
        if not answered and (name := mcp.tool_named(body, "lore_create_node")):
            return {"tool_call": {**name, "arguments": {
                "uri": "project://shop/decision/deploys", "content": mcp.DECISION, "category": "decision"}}}
        if len(answered) == 1:
            return {"tool_call": {"name": "bash", "arguments": {"command": "cat NOTES.md", "description": "notes"}}}
        return LAST_REPLY
    return mcp.reply(api, body)


def recall_texts(store, ws, query: str) -> list[str]:
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        return [h["snippet"] for h in c.request("lore/recall", {"query": query, "sources": ["messages"]})["hits"]]
    finally:
        c.close()


def test_copilot_saves_a_decision_then_opens_the_recalled_lead(lab):
    ws, store, tmp = lab
    copilot = harness.install("copilot")
    (ws / "NOTES.md").write_text(NOTES)
    with FakeModels(reply) as fake:
        # The hook's own budget raised to what the installed config gives it (10 s): a loaded CI
        # machine must not turn a slow recall into a missing lead.
        env = {**harness.copilot_env(tmp, fake.url), "LORE_STORE_DIR": str(store), "LORE_HOOK_IDLE_MS": "60000",
               "LORE_HOOK_TIMEOUT_MS": "8000"}
        env.pop("LORE_HARNESS", None)  # the installed config names the harness itself
        harness.install_lore("copilot", env)  # $COPILOT_HOME/settings.json hooks and mcp-config.json
        cmd = [str(copilot), "--allow-all-tools", "-p"]
        first = harness.run([*cmd, mcp.SAVE + " Then show the notes file."], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert any("walrus cache key" in b for b in fake.bodies("chat")), "Copilot never ran the command"
        saved = [m.get("content") for b in fake.bodies("chat") for m in json.loads(b)["messages"] if m.get("role") == "tool"]
        assert saved and "created project://shop/decision/deploys" in str(saved[0]), saved[:1]
        mcp.wait_for_node(store, ws)
        second = harness.run([*cmd, mcp.ASK], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        asked = [b for b in fake.bodies("chat") if "How do our deploys" in b]
        opened = mcp.get_node_result(fake, "chat")
    # The lead arrived as Copilot reads hook output (a flat additionalContext), in the prompt.
    assert asked and "<recall session_id=" in asked[0] and "project://shop/decision/deploys" in asked[0]
    assert "blue-green switching on the Hetzner pair" in opened
    u = mcp.usage_of(store, ws, "copilot")
    assert u["recalled"].get("copilot", 0) >= 1 and u["used"].get("copilot") == 1, u
    assert any("walrus cache key" in s for s in recall_texts(store, ws, "walrus cache key Tuesday"))
    deadline = time.monotonic() + 30
    while True:
        with sqlite3.connect(store / "lore.db") as db:
            tools = db.execute("SELECT tool_name FROM messages WHERE role='tool' AND text LIKE '%walrus%'").fetchall()
            ends = db.execute("SELECT count(*) FROM messages WHERE role='assistant' AND text = ?", (LAST_REPLY,)).fetchone()
        if tools and ends[0]:
            break
        assert time.monotonic() < deadline, (tools, ends)
        time.sleep(0.3)
    assert tools[0][0] == "Bash"  # from the PostToolUse hook (Copilot's tool_result, no call id)
    assert ends[0] == 1  # the transcript's end, read from events.jsonl at Stop, captured once
