"""Claude Code and Codex, the real programs, with the shipped hook configs: a fact stated in
the first session reaches the model request of the second, captured by the hooks alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support import harness
from tests.support.fake_models import FakeModels

pytestmark = pytest.mark.slow  # each test runs a real harness, 10-40 s warm (a first install: minutes)

EDITORS = harness.ROOT / "editors"
FACT = "the staging database listens on port 6543"
QUESTION = "Which port does the staging database listen on?"


def reply(api: str, body: dict):
    """"Noted." - except that a prompt asking to use lore_recall gets that tool called once
    (Chat Completions), and the tool's result is then acknowledged."""
    if api == "anthropic":
        text = json.dumps(body.get("messages", []))
        if "tool_result" in text:
            return "Listed."
        wanted = re.search(r"Read the file (/\S+?\.md)", text)
        if wanted:
            return {"tool_call": {"name": "Read", "arguments": {"file_path": wanted.group(1)}}}
    if api == "responses":
        text = json.dumps(body.get("input", []))
        if "function_call_output" in text:
            return "Shown."
        if "Show the notes file" in text:
            return {"tool_call": {"name": "exec_command", "arguments": {"cmd": "cat NOTES.md"}}}
    if api == "chat":
        messages = body.get("messages", [])
        if any(m.get("role") == "tool" for m in messages):
            return "The recall tool answered."
        if any("lore_recall" in json.dumps(m.get("content")) and m.get("role") == "user" for m in messages):
            return {"tool_call": {"name": "lore_recall", "arguments": {"query": "staging database port"}}}
    return "Noted."


TOOL_PROMPT = "Use the lore_recall tool to look up the staging database."


def tool_result_request(fake: FakeModels) -> str:
    """What the lore_recall tool returned, as the harness sent it back to the model."""
    bodies = [json.loads(b) for b in fake.bodies("chat") if '"role": "tool"' in b]
    assert bodies, "the lore_recall tool was never called"
    return json.dumps([m.get("content") for m in bodies[-1]["messages"] if m.get("role") == "tool"])


def base_env(tmp: Path, store: Path, name: str) -> dict[str, str]:
    home = tmp / f"home-{name}"
    home.mkdir(exist_ok=True)
    return {**os.environ, **harness.lore_path_env(), "HOME": str(home), "LORE_STORE_DIR": str(store),
            "LORE_HOOK_IDLE_MS": "60000", "LORE_HARNESS": name}


def wait_until_recallable(store: Path, ws: Path, words: str, timeout: float = 60) -> None:
    """A follower's read: the first session's fact is in the record and indexed."""
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        deadline = time.monotonic() + timeout
        while not any("6543" in h["snippet"] for h in c.request("lore/recall", {"query": words})["hits"]):
            assert time.monotonic() < deadline, "the first session's fact never reached the store"
            time.sleep(0.3)
    finally:
        c.close()


def second_session_request(fake: FakeModels, api: str) -> str:
    bodies = [b for b in fake.bodies(api) if "Which port" in b]
    assert bodies, "the second session never reached the model"
    return bodies[-1]


def test_claude_code_hooks_carry_a_fact_into_the_next_session(lab):
    ws, store, tmp = lab
    claude = harness.install("claude")
    with FakeModels(reply) as fake:
        env = {**base_env(tmp, store, "claude-code"), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1"}
        harness.install_lore("claude-code", env, ws)  # .claude/settings.json and .mcp.json, as a user would
        first = harness.run([str(claude), "-p", f"Remember this: {FACT}."], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert not any("6543" in b and "<recall session_id=" in b for b in fake.bodies("anthropic"))  # nothing to recall yet
        wait_until_recallable(store, ws, "staging database port")
        second = harness.run([str(claude), "-p", QUESTION], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        body = second_session_request(fake, "anthropic")
    assert "<recall session_id=" in body and "6543" in body  # the recall block, with the first session's fact
    assert "6543" not in QUESTION


def test_claude_code_post_tool_use_hook_records_tool_output(lab):
    ws, store, tmp = lab
    claude = harness.install("claude")
    (ws / "NOTES.md").write_text("# notes\nthe walrus cache key rotates weekly\n")
    with FakeModels(reply) as fake:
        env = {**base_env(tmp, store, "claude-code"), "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1"}
        harness.install_lore("claude-code", env, ws)
        harness.run([str(claude), "-p", "Hello."], cwd=ws, env=env)  # warms the hook daemon
        harness.wait_for_daemon(store)
        run = harness.run([str(claude), "-p", f"Read the file {ws / 'NOTES.md'} please."], cwd=ws, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        assert any("tool_result" in b for b in fake.bodies("anthropic")), "Claude Code never ran the tool"
    deadline = time.monotonic() + 30
    while True:
        with sqlite3.connect(store / "lore.db") as db:
            rows = db.execute("SELECT tool_name, text FROM messages WHERE role='tool'").fetchall()
        if any(name == "Read" and "walrus cache key" in text for name, text in rows):
            break  # recorded by the PostToolUse hook (the transcript capture has no tool name)
        assert time.monotonic() < deadline, f"no Read output recorded: {rows}"
        time.sleep(0.2)


def codex_home(tmp: Path, url: str, ws: Path) -> Path:
    home = harness.codex_config(tmp / "codex-home", url)
    # The hooks (and the MCP server, and the project's trust) as a user sets them up.
    harness.install_lore("codex", {**os.environ, **harness.lore_path_env(), "HOME": str(tmp), "CODEX_HOME": str(home)}, ws)
    return home


def test_codex_hooks_carry_a_fact_into_the_next_session(lab):
    ws, store, tmp = lab
    codex = harness.install("codex")
    with FakeModels(reply) as fake:
        env = {**base_env(tmp, store, "codex"), "CODEX_HOME": str(codex_home(tmp, fake.url, ws)), "FAKE_API_KEY": "fake"}
        env.pop("LORE_HARNESS")  # the shipped hooks.json says --harness codex itself
        cmd = [str(codex), "exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false",
               "--dangerously-bypass-hook-trust"]
        first = harness.run([*cmd, f"Remember this: {FACT}."], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        wait_until_recallable(store, ws, "staging database port")
        second = harness.run([*cmd, QUESTION], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        body = second_session_request(fake, "responses")
    assert "<recall session_id=" in body and "6543" in body
    assert json.loads(body)["model"] == "fake-model"
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        assert c.request("lore/status")["usage"]["recalled"].get("codex", 0) >= 1  # the shipped config names the host
    finally:
        c.close()


def sidecar_cmd_env(store: Path) -> dict[str, str]:
    import sys

    return {"LORE_SIDECAR_CMD": f"{sys.executable} -m lore_sidecar --stdio --store-dir {store}"}


def pi_run(pi: Path, tmp: Path, store: Path, fake: FakeModels) -> tuple[list[str], dict[str, str]]:
    """Pi with a fake provider and the shipped extension: its command line and environment."""
    agent_dir = tmp / "pi-agent"
    agent_dir.mkdir()
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": f"{fake.url}/v1", "api": "openai-completions", "apiKey": "fake",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model"}]}}}))
    env = {**base_env(tmp, store, "pi"), **sidecar_cmd_env(store), "PI_CODING_AGENT_DIR": str(agent_dir),
           "PI_OFFLINE": "1"}
    return [str(pi), "-p", "--model", "fake/fake-model", "-e", str(EDITORS / "pi" / "lore.ts")], env


def test_pi_extension_carries_a_fact_into_the_next_session(lab):
    ws, store, tmp = lab
    pi = harness.install("pi")
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        first = harness.run([*cmd, f"Remember this: {FACT}."], cwd=ws, env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert fake.bodies("chat"), "pi never reached the model"
        wait_until_recallable(store, ws, "staging database port")
        second = harness.run([*cmd, QUESTION], cwd=ws, env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        body = second_session_request(fake, "chat")
        third = harness.run([*cmd, TOOL_PROMPT], cwd=ws, env=env)
        assert third.returncode == 0, third.stderr[-2000:]
        tool_body = tool_result_request(fake)
    assert "<recall session_id=" in body and "6543" in body
    assert "6543" in tool_body and "session://" in tool_body  # the extension's lore_recall tool answered from memory


# A sidecar whose store takes `delay` seconds to open (as one did at load 16-20: 7-8.5 s): it
# answers `initialize` at once, as it always does, and every request once the store is open.
SLOW_OPEN = textwrap.dedent('''
    import sys, time
    from lore_sidecar.rpc import server
    delay, real = float(sys.argv[1]), server.LoreServer._open

    def slow(self):
        time.sleep(delay)
        return real(self)

    server.LoreServer._open = slow
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[2:]))
''')


def slow_sidecar_env(tmp: Path, store: Path, delay_s: float) -> dict[str, str]:
    script = tmp / "slow_open.py"
    script.write_text(SLOW_OPEN)
    return {"LORE_SIDECAR_CMD": f"{sys.executable} {script} {delay_s} --stdio --store-dir {store}"}


def seed_fact(store: Path, ws: Path) -> None:
    """An earlier session that stated FACT, recorded and indexed."""
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws, options={"watch": False, "indexWorkspace": False})
        c.request("lore/recordMessages", {"sessionId": "earlier", "harness": "pi", "messages": [
            {"role": "user", "content": f"Remember this: {FACT}."}, {"role": "assistant", "content": "Noted."}]})
    finally:
        c.close()
    wait_until_recallable(store, ws, "staging database port")


def test_pi_extension_waits_for_a_sidecar_slow_to_open_and_its_first_prompt_gets_the_recall(lab):
    """The extension's requests gave up after 3 s, so a sidecar 8 s from open (a loaded
    machine) lost the first prompt's recall, silently. Control: the same session with a
    sidecar that opens at once."""
    ws, store, tmp = lab
    pi = harness.install("pi")
    seed_fact(store, ws)
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        for delay in (0, 8):
            run = harness.run([*cmd, QUESTION], cwd=ws, env={**env, **slow_sidecar_env(tmp, store, delay)})
            assert run.returncode == 0, run.stderr[-2000:]
            body = second_session_request(fake, "chat")
            assert "<recall session_id=" in body and "6543" in body, (delay, run.stderr[-1000:])
            fake.requests.clear()


def test_pi_extension_carries_on_without_memory_when_the_sidecar_never_opens(lab):
    """The wait for a slow sidecar is bounded (LORE_SIDECAR_READY_MS, here 3 s): with one
    that never opens, Pi still answers, its request without recall, and ends on its own. The
    control, the same prompt with a sidecar that opens, gets the recall."""
    ws, store, tmp = lab
    pi = harness.install("pi")
    seed_fact(store, ws)
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        stuck_env = {**env, "LORE_SIDECAR_READY_MS": "3000", **slow_sidecar_env(tmp, store, 3600)}
        stuck = harness.run([*cmd, QUESTION], cwd=ws, env=stuck_env, timeout=120)
        assert stuck.returncode == 0, stuck.stderr[-2000:]
        body = second_session_request(fake, "chat")
        assert "<recall" not in body and "6543" not in body
        assert "continuing without memory" in stuck.stderr or "timed out" in stuck.stderr
        # Each call's wait was bounded by LORE_SIDECAR_READY_MS (the client logs the wait it
        # gave up after), not by the 20 s default.
        waits = [int(ms) for ms in re.findall(r"timed out after (\d+) ms", stuck.stderr)]
        assert waits and max(waits) <= 3000, waits
        fake.requests.clear()
        control = harness.run([*cmd, QUESTION], cwd=ws, env=env)
        assert control.returncode == 0, control.stderr[-2000:]
        assert "6543" in second_session_request(fake, "chat")


GUIDANCE = "Long-term memory (lore) is available."  # the head of the session-start text


def test_pi_extension_gives_the_session_start_text_to_the_first_prompt_of_a_session_only(lab):
    """The session-start text (guidance, boot block, startup recall), asked for at session
    start without holding it, goes into the first prompt's system prompt, once: the session's
    second prompt gets its own recall, not the start text again."""
    ws, store, tmp = lab
    pi = harness.install("pi")
    seed_fact(store, ws)
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        run = harness.run([*cmd, "Say hello.", QUESTION], cwd=ws, env=env)  # two prompts, one session
        assert run.returncode == 0, run.stderr[-2000:]
        first = [b for b in fake.bodies("chat") if "Say hello." in b and "Which port" not in b]
        second = second_session_request(fake, "chat")
    assert first, "the first prompt never reached the model"
    assert first[0].count(GUIDANCE) == 1, first[0][:2000]
    assert "6543" in second and GUIDANCE not in second


# A sidecar that opens at once and never answers `lore/recordMessages`.
STUCK_WRITES = textwrap.dedent('''
    import asyncio, sys
    from lore_sidecar.rpc.features import capture
    real = capture.handlers

    def handlers(c):
        out = real(c)

        async def stuck(params):
            await asyncio.sleep(3600)

        out["lore/recordMessages"] = stuck
        return out

    capture.handlers = handlers
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[1:]))
''')


def test_pi_extension_waits_the_usual_3_s_once_the_sidecar_has_answered(lab):
    """The long wait (LORE_SIDECAR_READY_MS, 20 s by default) is for a sidecar still opening
    its store, before its first answer. Once it has answered, a call it does not answer gives
    up after 3 s, not whatever is left of the 20 s (the client logs the wait it gave up after)."""
    ws, store, tmp = lab
    pi = harness.install("pi")
    seed_fact(store, ws)
    script = tmp / "stuck_writes.py"
    script.write_text(STUCK_WRITES)
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        env = {**env, "LORE_SIDECAR_CMD": f"{sys.executable} {script} --stdio --store-dir {store}"}
        run = harness.run([*cmd, QUESTION], cwd=ws, env=env, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        body = second_session_request(fake, "chat")
    assert "<recall session_id=" in body and "6543" in body  # the sidecar answered before the writes
    waits = re.findall(r"lore/recordMessages timed out after (\d+) ms", run.stderr)
    assert waits and set(waits) == {"3000"}, (waits, run.stderr[-1000:])


def test_opencode_plugin_carries_a_fact_into_the_next_session(lab):
    ws, store, tmp = lab
    opencode = harness.install("opencode")
    plugin_deps = harness.install_plugin_deps()
    (ws / ".opencode" / "plugin").mkdir(parents=True)
    (ws / ".opencode" / "shared").mkdir()
    shutil.copy(EDITORS / "opencode" / "lore.ts", ws / ".opencode" / "plugin" / "lore.ts")
    shutil.copy(EDITORS / "shared" / "lore-client.ts", ws / ".opencode" / "shared" / "lore-client.ts")
    env = {**base_env(tmp, store, "opencode"), **sidecar_cmd_env(store),
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
            "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "model": "fake/fake-model",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                                  "options": {"baseURL": f"{fake.url}/v1", "apiKey": "fake"},
                                  "models": {"fake-model": {"name": "fake-model"}}}}}))
        first = harness.run([str(opencode), "run", f"Remember this: {FACT}."], cwd=ws, env=env, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        wait_until_recallable(store, ws, "staging database port")
        second = harness.run([str(opencode), "run", QUESTION], cwd=ws, env=env, timeout=300)
        assert second.returncode == 0, second.stderr[-3000:]
        body = second_session_request(fake, "chat")
        third = harness.run([str(opencode), "run", TOOL_PROMPT], cwd=ws, env=env, timeout=300)
        assert third.returncode == 0, third.stderr[-3000:]
        tool_body = tool_result_request(fake)
    assert "<recall session_id=" in body and "6543" in body
    assert "6543" in tool_body and "session://" in tool_body  # the plugin's lore_recall tool answered from memory


def tool_rows(store: Path) -> list[tuple]:
    with sqlite3.connect(store / "lore.db") as db:
        return db.execute("SELECT tool_name, text FROM messages WHERE role='tool'").fetchall()


def test_codex_post_tool_use_hook_records_tool_output(lab):
    ws, store, tmp = lab
    codex = harness.install("codex")
    (ws / "NOTES.md").write_text("the walrus cache key rotates weekly\n")
    with FakeModels(reply) as fake:
        env = {**base_env(tmp, store, "codex"), "CODEX_HOME": str(codex_home(tmp, fake.url, ws)), "FAKE_API_KEY": "fake"}
        cmd = [str(codex), "exec", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false",
               "--dangerously-bypass-hook-trust"]
        harness.run([*cmd, "Hello."], cwd=ws, env=env)  # warms the hook daemon
        harness.wait_for_daemon(store)
        run = harness.run([*cmd, "Show the notes file."], cwd=ws, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        assert any("function_call_output" in b for b in fake.bodies("responses")), "Codex never ran the command"
    deadline = time.monotonic() + 30
    while not any(name == "Bash" and "walrus cache key" in text for name, text in tool_rows(store)):
        assert time.monotonic() < deadline, f"no command output recorded: {tool_rows(store)}"
        time.sleep(0.2)


def test_pi_extension_assembles_context_in_process_when_asked(lab):
    ws, store, tmp = lab
    pi = harness.install("pi")
    with FakeModels(reply) as fake:
        cmd, env = pi_run(pi, tmp, store, fake)
        plain = harness.run([*cmd, "Hello."], cwd=ws, env=env)
        assert plain.returncode == 0, plain.stderr[-2000:]
        assert not list((store / "context").glob("*.json"))  # control: off unless asked
        asked = harness.run([*cmd, "Hello again."], cwd=ws, env={**env, "LORE_ASSEMBLE": "1"})
        assert asked.returncode == 0, asked.stderr[-2000:]
        assert fake.bodies("chat")[-1]
    states = [json.loads(p.read_text()) for p in (store / "context").glob("*.json")]
    assert states and states[0]["calls"] >= 1 and states[0]["captured"] >= 1  # each request went through lore
