"""`lore-sidecar run claude|codex` gives the agent lore's MCP tools for that run (issue 36
item 3: what a compressed prompt evicted is reachable through `lore_recall`), unless the
agent's own configuration already names a `lore` server; `--no-tools` adds none. The
harness here is a stand-in on PATH that records its argv; the MCP server the arguments
describe is then started as the agent would start it, and asked for its tools."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The SDK passes few variables on: these include the suite's own home and temp dirs.
from bench.mcp_session import PASSED_ON

RECORDER = """#!{python}
import json, os, sys
with open(os.environ["ARGV_OUT"], "w") as f:
    json.dump(sys.argv[1:], f)
"""


def run(tmp_path: Path, harness: str, *extra: str, home: Path | None = None, **env: str) -> list[str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / harness
    exe.write_text(RECORDER.format(python=sys.executable))
    exe.chmod(0o755)
    out = tmp_path / f"argv-{len(list(tmp_path.glob('argv-*')))}.json"
    home = home or tmp_path / "home"
    home.mkdir(exist_ok=True)
    store = tmp_path / "store"
    full = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home), "ARGV_OUT": str(out),
            "LORE_DISTILLER": "off", **env}
    full.pop("CLAUDE_CONFIG_DIR", None)
    full.pop("CODEX_HOME", None)
    full.update(env)
    done = subprocess.run([sys.executable, "-m", "lore_sidecar", "run", harness, "--store-dir", str(store), *extra],
                          capture_output=True, text=True, timeout=60, env=full, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.fixture(autouse=True)
def stop_gateway(tmp_path):
    yield
    registry = tmp_path / "store" / "gateway.json"
    if registry.exists():
        os.kill(json.loads(registry.read_text())["pid"], 15)


async def tools_of(command: str, args: list[str], cwd: Path) -> set[str]:
    """Start the server exactly as configured (its command and arguments) and list its tools."""
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd),
                                   env={k: os.environ[k] for k in PASSED_ON if k in os.environ})
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return {t.name for t in (await session.list_tools()).tools}


def test_run_claude_adds_lore_mcp_server_after_the_agents_own_arguments_and_it_serves_lore_tools(tmp_path):
    argv = run(tmp_path, "claude", "--", "fix the bug")
    assert argv[0] == "fix the bug"  # a bare prompt stays first: --mcp-config takes several values
    assert argv[argv.index("--allowedTools") + 1] == "mcp__lore"
    server = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["lore"]
    assert server["args"][-3:] == ["mcp", "--harness", "claude-code"]
    assert server["args"][server["args"].index("--store-dir") + 1] == str(tmp_path / "store")  # the gateway's store
    tools = asyncio.run(tools_of(server["command"], server["args"], tmp_path))
    assert "lore_recall" in tools, tools


def test_run_claude_adds_no_second_lore_server_when_one_is_configured_or_told_not_to(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    assert "--mcp-config" in run(tmp_path, "claude", home=home)  # control: another server is not lore's
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"lore": {"command": "lore-sidecar"}}}))
    assert "--mcp-config" not in run(tmp_path, "claude", home=home)
    (home / ".claude.json").write_text(json.dumps({"projects": {str(tmp_path): {"mcpServers": {"lore": {}}}}}))
    assert "--mcp-config" not in run(tmp_path, "claude", home=home)  # configured for this project
    (home / ".claude.json").unlink()
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"lore": {"command": "lore-sidecar"}}}))
    assert "--mcp-config" not in run(tmp_path, "claude", home=home)
    (tmp_path / ".mcp.json").unlink()
    assert run(tmp_path, "claude", "--no-tools", "--", "-p", "hi") == ["-p", "hi"]


def test_run_codex_configures_lore_mcp_server_before_its_subcommand_unless_configured(tmp_path):
    argv = run(tmp_path, "codex", "--", "exec", "summarise")
    assert argv[-2:] == ["exec", "summarise"]  # -c options are Codex's global ones: before the subcommand
    settings = [argv[i + 1] for i, a in enumerate(argv[:-2]) if a == "-c"]
    lore = tomllib.loads("\n".join(v.removeprefix("mcp_servers.lore.") for v in settings
                                   if v.startswith("mcp_servers.lore.")))
    assert lore["args"][-3:] == ["mcp", "--harness", "codex"] and "LORE_STORE_DIR" in lore["env_vars"]
    assert lore["required"] is True  # Codex waits for it before its first model call (see test_run_harnesses.py)
    tools = asyncio.run(tools_of(lore["command"], lore["args"], tmp_path))
    assert "lore_recall" in tools, tools
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('[mcp_servers.lore]\ncommand = "lore-sidecar"\n')
    argv = run(tmp_path, "codex", "--", "exec", "summarise", CODEX_HOME=str(codex_home))
    assert not any(a.startswith("mcp_servers.lore") for a in argv)
    assert "model_provider=lore" in argv  # control: still through the gateway
