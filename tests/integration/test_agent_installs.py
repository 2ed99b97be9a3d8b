"""`lore-sidecar install copilot|hermes` beside configs the user already has: their entries
and comments survive, lore's appear, a second run changes nothing, a dry run shows the diff
and writes nothing, uninstall restores every file byte for byte; Hermes keeps a memory
provider the user already chose (lore comes in as MCP tools only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lore_sidecar.errors import LoreError
from lore_sidecar.setup import yaml_block

HERMES_CONFIG = """\
# my Hermes settings
model:
  provider: openrouter   # the one I pay for
  default: some/model

# servers I run
mcp_servers:
  github:
    command: gh-mcp
    args: ["--read-only"]

memory:
  memory_enabled: true
  provider: ''
display:
  skin: mono
"""


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("XDG_", "COPILOT_", "HERMES_")) and k not in ("LORE_STORE_DIR",)}
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args],
                          env={**base, "HOME": str(home), "LORE_STORE_DIR": str(home / "store"), **env},
                          capture_output=True, text=True, timeout=120)


def files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".local/state/lore" not in str(p) and "/store/" not in str(p)}


def test_copilot_user_install_merges_hooks_and_mcp_then_uninstall_restores_bytes(tmp_path):
    home = tmp_path / "home"
    chome = home / ".copilot"
    chome.mkdir(parents=True)
    (chome / "settings.json").write_text(json.dumps({"model": "gpt-5", "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "my-own-hook"}]}]}}, indent=4))
    (chome / "mcp-config.json").write_text(json.dumps({"mcpServers": {"gh": {"type": "local", "command": "gh-mcp"}}}))
    before = files(home)
    dry = run(home, "install", "copilot", "--user", "--dry-run")
    assert dry.returncode == 0 and "--harness copilot" in dry.stdout and "+++" in dry.stdout, dry.stdout
    assert files(home) == before  # a dry run writes nothing
    done = run(home, "install", "copilot", "--user")
    assert done.returncode == 0, done.stderr
    settings = json.loads((chome / "settings.json").read_text())
    assert settings["model"] == "gpt-5"
    assert settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == "my-own-hook"  # theirs first, kept
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"):
        assert any("hook --harness copilot " + event in h["command"] for g in settings["hooks"][event] for h in g["hooks"])
    servers = json.loads((chome / "mcp-config.json").read_text())["mcpServers"]
    assert servers["gh"] == {"type": "local", "command": "gh-mcp"}
    assert servers["lore"]["args"][-3:] == ["mcp", "--harness", "copilot"] and servers["lore"]["tools"] == ["*"]
    installed = files(home)
    again = run(home, "install", "copilot", "--user")
    assert "nothing changed" in again.stdout and files(home) == installed
    gone = run(home, "uninstall", "copilot", "--user")
    assert gone.returncode == 0, gone.stderr
    assert files(home) == before


def test_copilot_project_install_writes_repository_hooks_and_explains_trust_without_forcing_it(tmp_path):
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    done = run(home, "install", "copilot", "--project", str(project))
    assert done.returncode == 0, done.stderr
    hooks = json.loads((project / ".github" / "hooks" / "lore.json").read_text())
    assert hooks["version"] == 1 and "--harness copilot UserPromptSubmit" in json.dumps(hooks)
    assert "trust" in done.stdout and "trustedFolders" in done.stdout
    assert not (home / ".copilot" / "config.json").exists()  # the folder is not trusted behind the user's back
    assert (home / ".copilot" / "mcp-config.json").exists()  # the MCP entry is the user's (Copilot reads it there)
    run(home, "uninstall", "copilot", "--project", str(project))
    assert not (project / ".github").exists() and not (home / ".copilot").exists()


def test_hermes_install_keeps_comments_and_order_places_the_provider_and_restores_bytes(tmp_path):
    home = tmp_path / "home"
    hhome = tmp_path / "hermes"
    (hhome).mkdir(parents=True)
    (hhome / "config.yaml").write_text(HERMES_CONFIG)
    before = files(tmp_path)
    dry = run(home, "install", "hermes", "--user", "--dry-run", HERMES_HOME=str(hhome))
    assert dry.returncode == 0 and "+    command:" in dry.stdout and "provider: lore" in dry.stdout, dry.stdout
    assert files(tmp_path) == before
    done = run(home, "install", "hermes", "--user", HERMES_HOME=str(hhome))
    assert done.returncode == 0, done.stderr
    text = (hhome / "config.yaml").read_text()
    for line in HERMES_CONFIG.splitlines():  # every line of theirs kept, comments included, in order
        if "provider: ''" not in line:
            assert line in text.splitlines()
    kept = [line for line in text.splitlines() if line in HERMES_CONFIG.splitlines()]
    assert kept == [line for line in HERMES_CONFIG.splitlines() if "provider: ''" not in line]
    doc = yaml.safe_load(text)
    assert doc["memory"] == {"memory_enabled": True, "provider": "lore"}
    assert doc["mcp_servers"]["github"] == {"command": "gh-mcp", "args": ["--read-only"]}
    lore = doc["mcp_servers"]["lore"]
    assert lore["args"][-3:] == ["mcp", "--harness", "hermes"] and lore["env"]["LORE_STORE_DIR"] == str(home / "store")
    assert doc["mcp_discovery_timeout"] == 15 and doc["display"] == {"skin": "mono"}
    provider = (hhome / "plugins" / "lore" / "__init__.py").read_text()
    assert "def register(ctx" in provider and 'LORE_COMMAND = ["lore-sidecar"]' not in provider  # this lore-sidecar
    assert (hhome / "plugins" / "lore" / "plugin.yaml").exists()
    installed = files(tmp_path)
    again = run(home, "install", "hermes", "--user", HERMES_HOME=str(hhome))
    assert "nothing changed" in again.stdout and files(tmp_path) == installed
    gone = run(home, "uninstall", "hermes", "--user", HERMES_HOME=str(hhome))
    assert gone.returncode == 0, gone.stderr
    assert files(tmp_path) == before


def test_hermes_with_another_memory_provider_gets_lore_as_mcp_tools_only(tmp_path):
    home, hhome = tmp_path / "home", tmp_path / "hermes"
    hhome.mkdir(parents=True)
    (hhome / "config.yaml").write_text(HERMES_CONFIG.replace("provider: ''", "provider: honcho"))
    done = run(home, "install", "hermes", "--user", HERMES_HOME=str(hhome))
    assert done.returncode == 0, done.stderr
    doc = yaml.safe_load((hhome / "config.yaml").read_text())
    assert doc["memory"]["provider"] == "honcho"  # theirs stays; Hermes allows one
    assert "lore" in doc["mcp_servers"]
    assert not (hhome / "plugins").exists()
    assert "honcho" in done.stdout and "MCP tools only" in done.stdout


def test_hermes_uninstall_after_the_user_edited_the_file_takes_only_lores_entries_out(tmp_path):
    home, hhome = tmp_path / "home", tmp_path / "hermes"
    hhome.mkdir(parents=True)
    (hhome / "config.yaml").write_text(HERMES_CONFIG)
    assert run(home, "install", "hermes", "--user", HERMES_HOME=str(hhome)).returncode == 0
    with (hhome / "config.yaml").open("a") as f:
        f.write("# added later\nagent:\n  max_turns: 40\n")
    assert run(home, "uninstall", "hermes", "--user", HERMES_HOME=str(hhome)).returncode == 0
    text = (hhome / "config.yaml").read_text()
    doc = yaml.safe_load(text)
    assert "lore" not in doc["mcp_servers"] and "provider" not in doc["memory"] and "mcp_discovery_timeout" not in doc
    assert doc["agent"] == {"max_turns": 40} and "# added later" in text and "# servers I run" in text
    assert not (hhome / "plugins" / "lore").exists()


def test_a_flow_style_block_is_refused_and_a_block_style_one_merged():
    entry = [(0, "lore:"), (1, 'command: "x"')]
    flow = "mcp_servers: {github: {command: gh}}\n"
    with pytest.raises(LoreError) as refused:
        yaml_block.set_child(flow, "mcp_servers", "lore", entry)
    assert refused.value.kind == "configUnreadable"
    block = "mcp_servers:\n    github:\n        command: gh\n"
    merged = yaml_block.set_child(block, "mcp_servers", "lore", entry)
    assert yaml.safe_load(merged) == {"mcp_servers": {"github": {"command": "gh"}, "lore": {"command": "x"}}}
    assert merged.startswith(block)  # their indentation (4) is followed, their lines untouched
    assert yaml_block.remove_child(merged, "mcp_servers", "lore") == block
    assert yaml_block.set_child("mcp_servers: {}\n", "mcp_servers", "lore", entry) == 'mcp_servers:\n  lore:\n    command: "x"\n'


def test_doctor_checks_both_installs_and_names_a_missing_provider_file(tmp_path):
    home, hhome = tmp_path / "home", tmp_path / "hermes"
    hhome.mkdir(parents=True)
    (hhome / "config.yaml").write_text(HERMES_CONFIG)
    env = {"HERMES_HOME": str(hhome), "COPILOT_HOME": str(tmp_path / "copilot")}
    assert run(home, "install", "hermes", "--user", **env).returncode == 0
    assert run(home, "install", "copilot", "--user", **env).returncode == 0
    checks = {c["name"]: c for c in json.loads(run(home, "doctor", "--json", **env).stdout)["checks"]}
    assert checks["hermes (user)"]["state"] == "ok" and checks["copilot (user)"]["state"] == "ok", checks
    (hhome / "plugins" / "lore" / "__init__.py").unlink()
    checks = {c["name"]: c for c in json.loads(run(home, "doctor", "--json", **env).stdout)["checks"]}
    assert checks["hermes (user)"]["state"] == "fail" and "__init__.py" in checks["hermes (user)"]["detail"]
    assert checks["copilot (user)"]["state"] == "ok"


def test_doctor_names_a_hermes_config_that_starts_another_lore_sidecar_when_lore_is_mcp_only(tmp_path):
    """MCP only (another memory provider is active), config.yaml is the one file naming the
    command: no provider file there to show that it points elsewhere."""
    home, hhome = tmp_path / "home", tmp_path / "hermes"
    hhome.mkdir(parents=True)
    config = hhome / "config.yaml"
    config.write_text(HERMES_CONFIG.replace("provider: ''", "provider: honcho"))
    env = {"HERMES_HOME": str(hhome)}
    assert run(home, "install", "hermes", "--user", **env).returncode == 0
    assert not (hhome / "plugins").exists()
    checks = {c["name"]: c for c in json.loads(run(home, "doctor", "--json", **env).stdout)["checks"]}
    assert checks["hermes (user)"]["state"] == "ok", checks  # control: this lore-sidecar
    command = yaml.safe_load(config.read_text())["mcp_servers"]["lore"]["command"]
    config.write_text(config.read_text().replace(command, str(tmp_path / "old-venv" / "bin" / "lore-sidecar")))
    checks = {c["name"]: c for c in json.loads(run(home, "doctor", "--json", **env).stdout)["checks"]}
    assert checks["hermes (user)"]["state"] == "fail" and "config.yaml" in checks["hermes (user)"]["detail"], checks
