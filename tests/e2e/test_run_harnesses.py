"""`lore-sidecar run claude` and `run codex`, the real programs, offline against the fake
model server, from homes where no lore MCP server is configured (issue 36 item 3): `run`
itself gives the agent lore's tools. One short session each, with the raw window held at
its smallest so the gateway compresses after two reads: the agent reads four notes files;
when it is told what the first one said, that file is no longer in the prompt (only the
`<lore-context>` digest is), so the scripted model asks `lore_recall` with the session id the
digest names, and its answer quotes what the tool returned. The scripted model answers at
once, so the tools must be there from the first request: `run` makes both harnesses wait for
lore's server. Control: the same session run with `--no-tools` offers the model no lore
tool, and its answer cannot carry the marker."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow

SECRET = "kestrel4417umber"
NOTES = ("alpha", "beta", "gamma", "delta")
PROMPT = "Read the four files under notes/ in order, then tell me the vault combination from the first."
HEADER = re.compile(r"([A-Z]+) NOTES \(file (\d)\)")
DIGEST = re.compile(r'<lore-context session_id=\\*"([^"\\]+)')
TOLD = re.compile(r"vault combination is (\w+)")


def notes(ws: Path) -> None:
    """About 1,500 tokens a file, so each read passes the 1,000-token raw window."""
    (ws / "notes").mkdir()
    for k, name in enumerate(NOTES):
        told = f"The vault combination is {SECRET}.\n" if k == 0 else ""
        rows = "\n".join(f"{name} row {i:02d}: the inventory ledger balances at {k * 100 + i} crates of tea" for i in range(90))
        (ws / "notes" / f"{name}.txt").write_text(f"{name.upper()} NOTES (file {k})\n{told}{rows}\n")


def lore_tool(body: dict, suffix: str = "lore_recall") -> dict | None:
    """How this harness offers one of lore's tools (Claude Code prefixes MCP tools with
    `mcp__<server>__`, Codex puts a server's tools inside a `namespace` tool)."""
    for tool in body.get("tools") or []:
        for inner in tool.get("tools") or [] if tool.get("type") == "namespace" else []:
            if inner.get("name", "").endswith(suffix):
                return {"name": inner["name"], "namespace": tool["name"]}
        if (tool.get("name") or "").endswith(suffix):
            return {"name": tool["name"]}
    return None


def outputs(api: str, body: dict) -> list[tuple[str, str]]:
    """(call id, output as JSON text) of every tool output in the conversation, oldest first."""
    if api == "anthropic":
        return [(b["tool_use_id"], json.dumps(b.get("content"))) for m in body.get("messages", [])
                if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_result"]
    return [(i["call_id"], json.dumps(i.get("output"))) for i in body.get("input", [])
            if isinstance(i, dict) and i.get("type") == "function_call_output"]


def recall_calls(api: str, body: dict) -> set[str]:
    """The ids of the model's lore_recall calls in the conversation (their outputs are found
    by id: the compressed conversation holds fewer outputs than the harness sent)."""
    if api == "anthropic":
        return {b["id"] for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]
                if b.get("type") == "tool_use" and b.get("name", "").endswith("lore_recall")}
    return {i["call_id"] for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "function_call"
            and i.get("name", "").endswith("lore_recall")}


def scripted(ws: Path, recalls: list[dict]):
    """The model: read the notes one by one (the newest output says which was read last; the
    earlier ones may be gone), then recall, then answer from the recall's output. The body it
    recalled from is kept in `recalls`."""
    def reply(api: str, body: dict):
        if not body.get("tools") or api not in ("anthropic", "responses"):
            return "Noted."  # a side call (titles, summaries): no session in it
        done = outputs(api, body)
        last = done[-1][1] if done else ""
        if "query_id=" in last:  # the newest output is lore_recall's
            told = TOLD.search(last)
            return f"Memory says: the vault combination is {told.group(1)}." if told else "Memory does not say."
        seen = HEADER.findall(last)
        k = int(seen[-1][1]) + 1 if seen else 0
        if k < len(NOTES):
            path = ws / "notes" / f"{NOTES[k]}.txt"
            if api == "anthropic":
                return {"tool_call": {"name": "Read", "arguments": {"file_path": str(path)}}}
            return {"tool_call": {"name": "exec_command", "arguments": {"cmd": f"cat notes/{path.name}"}}}
        tool, digest = lore_tool(body), DIGEST.search(json.dumps(body))
        if tool is None:
            return "I have no memory tool to look back with."
        recalls.append(body)
        args = {"query": "vault combination", "sources": ["messages"]}
        return {"tool_call": {**tool, "arguments": {**args, **({"session_id": digest.group(1)} if digest else {})}}}
    return reply


def base_env(tmp: Path, bindir: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, **harness.lore_path_env(), "HOME": str(home), "LORE_DISTILLER": "off",
           # The raw window at its smallest: the gateway compresses from the second read on.
           "LORE_MIN_LAYER0_TOKENS": "1000", "LORE_MAX_LAYER0_TOKENS": "1000"}
    env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"  # where `run` finds the harness
    # Not MCP_CONNECTION_NONBLOCKING either: that Claude Code waits for lore's server in a
    # print run (and Codex, `required`) is `run`'s to arrange, and what this test checks.
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "LORE_STORE_DIR", "LORE_HARNESS", "ANTHROPIC_BASE_URL",
                 "MCP_CONNECTION_NONBLOCKING"):
        env.pop(name, None)
    return env


def lore_run(name: str, store: Path, upstream: str, args: list[str], ws: Path, env: dict[str, str], *extra: str):
    return harness.run([sys.executable, "-m", "lore_sidecar", "run", name, "--store-dir", str(store), "--upstream",
                        upstream, *extra, "--", *args], cwd=ws, env=env, timeout=400)


def stop_gateway(store: Path) -> None:
    try:
        os.kill(json.loads((store / "gateway.json").read_text())["pid"], 15)
    except (OSError, ValueError, KeyError):
        pass


def check_session(api: str, requests: list, recalls: list[dict], stdout: str) -> None:
    bodies = [body for a, _, body in requests if a == api and body.get("tools")]
    assert bodies and all(lore_tool(b) for b in bodies), [t.get("name") for t in bodies[0].get("tools", [])]
    assert len(recalls) == 1, f"the model never reached lore_recall ({len(bodies)} requests)"
    asked = json.dumps(recalls[0])
    assert "<lore-context" in asked and SECRET not in asked  # compressed: the first file is out of the prompt
    assert DIGEST.search(asked)  # and the digest names the session to recall from
    results = [text for b in bodies for cid, text in outputs(api, b) if cid in recall_calls(api, b)]
    assert results, "no request carried the recall's output"
    assert SECRET in results[0], results[0][:2000]  # lore_recall found the evicted turn
    assert f"the vault combination is {SECRET}" in stdout, stdout[-2000:]


def check_control(api: str, requests: list, stdout: str) -> None:
    bodies = [body for a, _, body in requests if a == api and body.get("tools")]
    assert bodies  # the harness's own tools were offered: a lore tool would have shown beside them
    assert not any(lore_tool(b, "lore_") for b in bodies)
    assert SECRET not in stdout and "no memory tool" in stdout, stdout[-2000:]


def test_run_claude_gives_claude_code_lore_recall_and_it_finds_the_compressed_turn(lab):
    ws, store, tmp = lab
    notes(ws)
    claude = harness.install("claude")
    env = {**base_env(tmp, claude.parent), "CLAUDE_CONFIG_DIR": str(tmp / "claude-config"),
           "ANTHROPIC_API_KEY": "sk-ant-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "MCP_TIMEOUT": "60000"}
    try:
        recalls: list[dict] = []
        with FakeModels(scripted(ws, recalls)) as fake:  # one upstream: both runs share the gateway
            done = lore_run("claude", store, fake.url, ["-p", PROMPT], ws, env)
            assert done.returncode == 0, done.stderr[-3000:]
            check_session("anthropic", fake.requests, recalls, done.stdout)
            first = len(fake.requests)
            done = lore_run("claude", store, fake.url, ["-p", PROMPT], ws, env, "--no-tools")
            assert done.returncode == 0, done.stderr[-3000:]
            check_control("anthropic", fake.requests[first:], done.stdout)
    finally:
        stop_gateway(store)


def test_run_codex_gives_codex_lore_recall_and_it_finds_the_compressed_turn(lab):
    ws, store, tmp = lab
    notes(ws)
    codex = harness.install("codex")
    home = tmp / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "fake-model"\napproval_policy = "never"\nsandbox_mode = "read-only"\n')
    (home / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-user-own"}))
    env = {**base_env(tmp, codex.parent), "CODEX_HOME": str(home)}
    args = ["exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false", PROMPT]
    try:
        recalls: list[dict] = []
        with FakeModels(scripted(ws, recalls)) as fake:  # one upstream: both runs share the gateway
            done = lore_run("codex", store, fake.url, args, ws, env)
            assert done.returncode == 0, done.stderr[-3000:]
            check_session("responses", fake.requests, recalls, done.stdout)
            first = len(fake.requests)
            done = lore_run("codex", store, fake.url, args, ws, env, "--no-tools")
            assert done.returncode == 0, done.stderr[-3000:]
            check_control("responses", fake.requests[first:], done.stdout)
    finally:
        stop_gateway(store)
