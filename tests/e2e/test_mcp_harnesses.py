"""Claude Code, Codex and OpenCode, the real programs, with the shipped MCP configs, offline
against the fake model server. Session 1: the model saves a decision with lore_create_node.
Session 2: the lead for it arrives in the prompt (the hook's `<recall>` block for Claude Code
and Codex, the plugin's for OpenCode); the model opens it with lore_get_node and the lead's
session_id / query_id; the tool result carries the decision; `lore/status` then shows the
lead recalled *and used* under the harness's own name."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow

EDITORS = harness.ROOT / "editors"
DECISION = "Deploys go out with blue-green switching on the Hetzner pair, never in place"
SAVE = "Save this decision to long-term memory: deploys are blue-green."
ASK = "How do our deploys switch traffic?"
RECALL_TAG = re.compile(r'<recall session_id=\\*"([^"\\]+)\\*" query_id=\\*"([^"\\]+)\\*"')


def tool_named(body: dict, suffix: str) -> dict | None:
    """How to call one of our tools as this harness offers it: each prefixes MCP tools its own
    way, and Codex groups a server's tools in a `namespace` tool."""
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if inner.get("name", "").endswith(suffix):
                    return {"name": inner["name"], "namespace": tool["name"]}
        name = tool.get("name") or (tool.get("function") or {}).get("name") or ""
        if name.endswith(suffix):
            return {"name": name}
    return None


def reply(api: str, body: dict):
    text = json.dumps(body)
    answered = ("tool_result" in text if api == "anthropic" else "function_call_output" in text if api == "responses"
                else any(m.get("role") == "tool" for m in body.get("messages", [])))
    if answered:
        return "Done."
    # Session 2 first: its recall block may quote session 1's prompt.
    if "How do our deploys" in text:
        name = tool_named(body, "lore_get_node")
        tag = RECALL_TAG.search(text)
        if name and tag and "project://shop/decision/deploys" in text:
            return {"tool_call": {**name, "arguments": {
                "uri": "project://shop/decision/deploys", "session_id": tag.group(1), "query_id": tag.group(2)}}}
        return "Noted."
    if "Save this decision" in text and (name := tool_named(body, "lore_create_node")):
        return {"tool_call": {**name, "arguments": {
            "uri": "project://shop/decision/deploys", "content": DECISION, "category": "decision"}}}
    return "Noted."


def get_node_result(fake: FakeModels, api: str) -> str:
    """What the lore_get_node call returned, as the harness sent it back to the model (found
    by the call's id in the conversation, not by searching the text)."""
    for raw in reversed(fake.bodies(api)):
        body = json.loads(raw)
        if api == "anthropic":
            blocks = [b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]]
            ids = {b["id"] for b in blocks if b.get("type") == "tool_use" and b["name"].endswith("lore_get_node")}
            found = [b["content"] for b in blocks if b.get("type") == "tool_result" and b.get("tool_use_id") in ids]
        elif api == "responses":
            items = [i for i in body.get("input", []) if isinstance(i, dict)]
            ids = {i["call_id"] for i in items if i.get("type") == "function_call" and i["name"].endswith("lore_get_node")}
            found = [i["output"] for i in items if i.get("type") == "function_call_output" and i.get("call_id") in ids]
        else:
            messages = body.get("messages", [])
            ids = {c["id"] for m in messages for c in m.get("tool_calls") or []
                   if c["function"]["name"].endswith("lore_get_node")}
            found = [m["content"] for m in messages if m.get("role") == "tool" and m.get("tool_call_id") in ids]
        if found:
            return json.dumps(found[-1])
    raise AssertionError(f"lore_get_node was never called; what the model saw: {saw(fake, api)}")


def saw(fake: FakeModels, api: str, prompt: str = "How do our deploys") -> dict:
    """Why the fake model did not save the decision or open the lead: the last request's tools
    and whether its recall block and the decision's address were in the prompt (a failure's
    diagnosis, not a check)."""
    asks = [json.loads(raw) for raw in fake.bodies(api) if prompt in raw]
    if not asks:
        return {"asks": 0, "requests": len(fake.bodies(api))}
    body, text = asks[-1], json.dumps(asks[-1])
    names = [t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or []]
    return {"asks": len(asks), "tools": names, "getNodeTool": tool_named(body, "lore_get_node"),
            "recallBlock": bool(RECALL_TAG.search(text)), "decisionUri": "project://shop/decision/deploys" in text}


def saved(fake: FakeModels, api: str, store: Path, ws: Path) -> None:
    """Session 1's decision is in the store (else: what the model was offered, to say why)."""
    try:
        wait_for_node(store, ws)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; what the model saw: {saw(fake, api, 'Save this decision')}") from None


def base_env(tmp: Path, store: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, **harness.lore_path_env(), "HOME": str(home), "LORE_STORE_DIR": str(store),
           "LORE_HOOK_IDLE_MS": "60000",
           # A loaded 2-core runner: the hook's answer (2 s by default, then the host goes on
           # without memory) and the MCP servers' start (Claude Code's MCP_TIMEOUT) get room.
           "LORE_HOOK_TIMEOUT_MS": "15000", "MCP_TIMEOUT": "60000",
           # Claude Code 2.1 may send its first request before an MCP server has connected
           # (the model gets a WaitForMcpServers tool instead); a scripted model does not wait,
           # so the test asks for the blocking start.
           "MCP_CONNECTION_NONBLOCKING": "false"}
    env.pop("LORE_HARNESS", None)  # the shipped configs name the harness themselves
    return env


def usage_of(store: Path, ws: Path, runtime: str, timeout: float = 30) -> dict:
    """`lore/status` usage once `runtime` has a lead used (a follower's count is spooled for
    the writer, so it lands a moment after the session ends), or as it is at the deadline."""
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        deadline = time.monotonic() + timeout
        while True:
            u = c.request("lore/status")["usage"]
            if u["used"].get(runtime) or time.monotonic() > deadline:
                return u
            time.sleep(0.3)
    finally:
        c.close()


def wait_for_node(store: Path, ws: Path, timeout: float = 60) -> None:
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        deadline = time.monotonic() + timeout
        while "error" in c.request_full("lore/getNode", {"uri": "project://shop/decision/deploys"}):
            assert time.monotonic() < deadline, "the decision never reached the store"
            time.sleep(0.3)
    finally:
        c.close()


def test_claude_code_saves_a_decision_then_opens_the_recalled_lead(lab):
    ws, store, tmp = lab
    claude = harness.install("claude")
    # As after the user accepted the workspace's trust dialog once: the project's settings
    # (the permission for the mcp__lore tools) apply.
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "home" / ".claude.json").write_text(json.dumps({"projects": {str(ws): {"hasTrustDialogAccepted": True}}}))
    with FakeModels(reply) as fake:
        env = {**base_env(tmp, store), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1"}
        harness.install_lore("claude-code", env, ws)  # hooks, .mcp.json and the tools' permission
        first = harness.run([str(claude), "-p", SAVE], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        saved(fake, "anthropic", store, ws)
        second = harness.run([str(claude), "-p", ASK], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        opened = get_node_result(fake, "anthropic")
    assert "blue-green switching on the Hetzner pair" in opened
    u = usage_of(store, ws, "claude-code")
    assert u["recalled"].get("claude-code", 0) >= 1 and u["used"].get("claude-code") == 1, u


def test_codex_saves_a_decision_then_opens_the_recalled_lead(lab):
    ws, store, tmp = lab
    codex = harness.install("codex")
    with FakeModels(reply) as fake:
        home = harness.codex_config(tmp / "codex-home", fake.url)
        env = {**base_env(tmp, store), "CODEX_HOME": str(home), "FAKE_API_KEY": "fake"}
        harness.install_lore("codex", env, ws)  # the MCP server, the project's hooks and its trust
        cmd = [str(codex), "exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false",
               "--dangerously-bypass-hook-trust"]
        first = harness.run([*cmd, SAVE], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        saved(fake, "responses", store, ws)
        second = harness.run([*cmd, ASK], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        opened = get_node_result(fake, "responses")
    assert "blue-green switching on the Hetzner pair" in opened
    u = usage_of(store, ws, "codex")
    assert u["recalled"].get("codex", 0) >= 1 and u["used"].get("codex") == 1, u


def test_opencode_saves_a_decision_then_opens_the_recalled_lead(lab):
    ws, store, tmp = lab
    opencode = harness.install("opencode")
    plugin_deps = harness.install_plugin_deps()
    (ws / ".opencode").mkdir()
    env = {**base_env(tmp, store),
           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    # OpenCode's global config dir is $XDG_CONFIG_HOME/opencode (conftest sets one per test),
    # not ~/.config/opencode: the dir prepared below must be the one it reads.
    home_cfg = Path(env.get("XDG_CONFIG_HOME") or Path(env["HOME"]) / ".config") / "opencode"
    home_cfg.mkdir(parents=True, exist_ok=True)
    for cfg in (home_cfg, ws / ".opencode"):  # OpenCode would otherwise try to install this offline
        (cfg / "node_modules").symlink_to(plugin_deps / "node_modules")
        shutil.copy(plugin_deps / "package.json", cfg / "package.json")
        # The lock too: OpenCode reinstalls a config dir (from the registry, replacing the
        # link; ~10 s here, a timeout offline) whose lock does not list @opencode-ai/plugin.
        shutil.copy(plugin_deps / "package-lock.json", cfg / "package-lock.json")
    with FakeModels(reply) as fake:
        (ws / "opencode.json").write_text(json.dumps({
            "autoupdate": False, "share": "disabled", "model": "fake/fake-model",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                                  "options": {"baseURL": f"{fake.url}/v1", "apiKey": "fake"},
                                  "models": {"fake-model": {"name": "fake-model"}}}}}))
        harness.install_lore("opencode", env, ws)  # the plugin and the MCP entry, merged into opencode.json
        first = harness.run([str(opencode), "run", SAVE], cwd=ws, env=env, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        saved(fake, "chat", store, ws)
        second = harness.run([str(opencode), "run", ASK], cwd=ws, env=env, timeout=300)
        assert second.returncode == 0, second.stderr[-3000:]
        opened = get_node_result(fake, "chat")
    assert "blue-green switching on the Hetzner pair" in opened
    u = usage_of(store, ws, "opencode")
    assert u["recalled"].get("opencode", 0) >= 1 and u["used"].get("opencode") == 1, u
