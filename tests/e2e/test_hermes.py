"""Hermes Agent, the real program (PyPI, its own virtualenv), set up with `lore-sidecar
install hermes` alone, offline against the fake model server. lore is its memory provider
(prefetch -> the `<recall>` block inside Hermes' `<memory-context>`, sync_turn -> capture)
and its MCP server gives the tools. Session 1: the model saves a decision with
lore_create_node and runs a terminal command. Session 2: the lead is in the request, the model
opens it with lore_get_node and the lead's ids, and `lore/status` counts it recalled and used
under `hermes`; the command's output of session 1 is recallable and the session's last reply
(handed over at the turn's end) is in the store."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest

from tests.e2e import test_mcp_harnesses as mcp
from tests.e2e.test_copilot import recall_texts
from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow

NOTES = "the walrus cache key rotates every Tuesday\n"
LAST_REPLY = "Saved, and the notes are shown."


def reply(api: str, body: dict):
    text = json.dumps(body)
    answered = [m for m in body.get("messages", []) if m.get("role") == "tool"]
    if "How do our deploys" not in text and "Save this decision" in text:
        if not answered and (name := mcp.tool_named(body, "lore_create_node")):
            return {"tool_call": {**name, "arguments": {
                "uri": "project://shop/decision/deploys", "content": mcp.DECISION, "category": "decision"}}}
        if len(answered) == 1:
            return {"tool_call": {"name": "terminal", "arguments": {"command": "cat NOTES.md"}}}
        return LAST_REPLY
    return mcp.reply(api, body)


def test_hermes_saves_a_decision_then_opens_the_recalled_lead(lab):
    ws, store, tmp = lab
    hermes = harness.install_hermes()
    (ws / "NOTES.md").write_text(NOTES)
    with FakeModels(reply) as fake:
        home = tmp / "home"
        home.mkdir()
        hermes_home = harness.hermes_config(tmp / "hermes-home", fake.url)
        env = {**os.environ, **harness.lore_path_env(), "HOME": str(home), "HERMES_HOME": str(hermes_home),
               "LORE_STORE_DIR": str(store), "LORE_HOOK_IDLE_MS": "60000"}
        env.pop("LORE_HARNESS", None)  # the provider and the MCP entry name the harness themselves
        harness.install_lore("hermes", env)  # the provider plugin, memory.provider and mcp_servers.lore
        # `chat -q` waits for MCP discovery (`-z` does not: a cold server's tools would be missing).
        cmd = [str(hermes), "chat", "-Q", "--yolo", "-q"]
        first = harness.run([*cmd, mcp.SAVE + " Then show the notes file."], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        saved = [m.get("content") for b in fake.bodies("chat") for m in json.loads(b)["messages"] if m.get("role") == "tool"]
        assert saved and "created project://shop/decision/deploys" in str(saved[0]), saved[:1]
        assert any("walrus cache key" in str(s) for s in saved), "Hermes never ran the command"
        mcp.wait_for_node(store, ws)
        second = harness.run([*cmd, mcp.ASK], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        asked = [b for b in fake.bodies("chat") if "How do our deploys" in b]
        opened = mcp.get_node_result(fake, "chat")
    # The provider's prefetch: lore's lead inside Hermes' memory-context block, in the request.
    assert asked and "<memory-context>" in asked[0] and "<recall session_id=" in asked[0]
    assert "project://shop/decision/deploys" in asked[0]
    assert "blue-green switching on the Hetzner pair" in opened
    u = mcp.usage_of(store, ws, "hermes")
    assert u["recalled"].get("hermes", 0) >= 1 and u["used"].get("hermes") == 1, u
    assert any("walrus cache key" in s for s in recall_texts(store, ws, "walrus cache key Tuesday"))
    deadline = time.monotonic() + 30
    while True:
        with sqlite3.connect(store / "lore.db") as db:
            ends = db.execute("SELECT count(*) FROM messages WHERE role='assistant' AND harness='hermes' AND text = ?",
                              (LAST_REPLY,)).fetchone()[0]
            tools = db.execute("SELECT tool_name FROM messages WHERE role='tool' AND text LIKE '%walrus%'").fetchall()
        if ends and tools:
            break
        assert time.monotonic() < deadline, (ends, tools)
        time.sleep(0.3)
    assert ends == 1 and tools[0][0] == "terminal"  # sync_turn and session end: once, with the tool's name
