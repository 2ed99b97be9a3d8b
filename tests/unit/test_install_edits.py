"""The pieces `lore-sidecar install` / `uninstall` are made of (lore_sidecar/setup/hosts.py,
agents.py, yaml_block.py, formats.py, install.py, commands.py), each on documents and folders
made in tmp_path: whose hook groups are lore's, what is left once lore's entries are out, the
few values install must not lower or add where they do not belong. The whole installs are
driven in tests/integration/test_install.py and test_agent_installs.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import tomlkit

from lore_sidecar.setup import agents, formats, hosts, install
from lore_sidecar.setup import yaml_block as y

EXE = ("/opt/lore/bin/lore-sidecar",)


def where(tmp_path: Path, project: Path | None = None, **env: str) -> hosts.Where:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return hosts.Where(home=home, env={"HOME": str(home), **env}, project=project, exe=EXE)


def lore_group(w: hosts.Where, event: str = "Stop") -> dict:
    return hosts.hook_group(w, "claude-code", event, None)


def test_a_hook_group_shared_with_the_users_own_command_is_not_lores_to_remove(tmp_path):
    w = where(tmp_path)
    mixed = {"hooks": [{"type": "command", "command": "notify-send done"}, *lore_group(w)["hooks"]]}
    doc = {"hooks": {"Stop": [mixed, lore_group(w)]}}
    hosts.remove_hooks(doc)
    assert doc == {"hooks": {"Stop": [mixed]}}  # lore's own group went; the shared one stays whole


def test_two_old_lore_groups_become_one_in_the_place_of_the_first(tmp_path):
    w = where(tmp_path)
    other = {"hooks": [{"type": "command", "command": "notify-send done"}]}
    old = {"hooks": [{"type": "command", "command": "/old/lore-sidecar hook --harness claude-code Stop"}]}
    doc = {"hooks": {"Stop": [old, other, old]}}
    hosts.add_hooks(doc, w, "claude-code", (("Stop", None),))
    assert doc["hooks"]["Stop"] == [lore_group(w), other]


def test_claude_code_hooks_cover_each_event_including_the_sessions_end(tmp_path):
    w = where(tmp_path)
    doc: dict = {}
    settings = hosts.claude(w)[0]
    settings.add(doc)
    assert set(doc["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"}
    assert doc["hooks"]["PostToolUse"][0]["matcher"] == "*" and "matcher" not in doc["hooks"]["Stop"][0]
    assert doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 10
    settings.remove(doc)
    assert doc == {}  # hooks and the emptied permissions both gone


def test_taking_lores_tool_permission_out_keeps_the_users_and_drops_what_is_left_empty():
    doc = {"permissions": {"allow": ["Bash(ls)", "mcp__lore"]}}
    hosts.disallow_tools(doc)
    assert doc == {"permissions": {"allow": ["Bash(ls)"]}}
    doc = {"permissions": {"allow": ["mcp__lore"]}, "theme": "dark"}
    hosts.disallow_tools(doc)
    assert doc == {"theme": "dark"}


def test_pruning_an_entry_drops_the_parents_it_leaves_empty_and_no_sibling():
    doc = {"mcpServers": {"lore": {"command": "x"}}, "a": 1}
    formats.prune_empty(doc, "mcpServers", "lore")
    assert doc == {"a": 1}
    doc = {"mcpServers": {"lore": {}, "other": {}}}
    formats.prune_empty(doc, "mcpServers", "lore")
    assert doc == {"mcpServers": {"other": {}}}


def test_helix_languages_install_adds_then_uninstall_leaves_an_empty_file(tmp_path):
    [edit] = hosts.helix(where(tmp_path))
    doc = tomlkit.parse("")
    edit.add(doc)
    assert [e["name"] for e in doc["language"]] == ["python", "rust", "markdown"]
    assert doc["language"][0]["language-servers"] == ["pylsp", "lore"]
    edit.remove(doc)
    assert tomlkit.dumps(doc).strip() == ""


def test_codex_trusts_the_project_it_installs_in_and_nothing_for_a_user_install(tmp_path):
    project = tmp_path / "proj"
    for w, trusted in ((where(tmp_path), False), (where(tmp_path, project), True)):
        doc = tomlkit.parse("")
        hosts.codex(w)[0].add(doc)
        assert doc["mcp_servers"]["lore"]["env_vars"][-1] == "ANTHROPIC_BASE_URL"
        assert ("projects" in doc) is trusted
        if trusted:
            assert doc["projects"][str(project)]["trust_level"] == "trusted"


def test_codex_trust_is_taken_back_past_a_malformed_projects_value_without_failing(tmp_path):
    """A config.toml whose `projects` (or the project's entry) was not a table before install
    held no trust for the project: uninstall takes the trust back instead of failing on it,
    as it does for a well-formed file without the entry (the control)."""
    project = tmp_path / "proj"
    edit = hosts.codex(where(tmp_path, project))[0]
    for before in (f'projects = "{project}"\n', f'[projects]\n"{project}" = "trusted"\n', ""):
        doc = tomlkit.parse("")
        edit.add(doc)
        edit.restore(doc, tomlkit.parse(before))
        assert "projects" not in doc and "lore" in doc["mcp_servers"], before


def test_copilot_repository_hooks_carry_a_version_and_uninstall_leaves_nothing(tmp_path):
    hook = agents.copilot(where(tmp_path, tmp_path / "repo"))[0]
    doc: dict = {}
    hook.add(doc)
    assert doc["version"] == 1 and set(doc["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    hook.remove(doc)
    assert doc == {}
    kept = {"version": 1, "disableAllHooks": False}
    hook.add(kept)
    hook.remove(kept)
    assert kept == {"version": 1, "disableAllHooks": False}  # the control: another key keeps the version


def test_hermes_discovery_timeout_is_raised_to_fifteen_seconds_never_lowered(tmp_path):
    w = where(tmp_path, HERMES_HOME=str(tmp_path / "hermes"))
    add = agents.hermes(w)[-1].add
    assert y.top(add("mcp_discovery_timeout: 5\n"), "mcp_discovery_timeout") == "15"
    assert y.top(add("mcp_discovery_timeout: 30\n"), "mcp_discovery_timeout") == "30"
    assert y.top(add(""), "mcp_discovery_timeout") == "15"


def test_hermes_already_on_lores_provider_gets_the_whole_install(tmp_path):
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: lore\n")
    edits = agents.hermes(where(tmp_path, HERMES_HOME=str(home)))
    assert [e.path.name for e in edits] == ["__init__.py", "plugin.yaml", "config.yaml"]
    (home / "config.yaml").write_text("memory:\n  provider: honcho\n")  # the control: another provider
    assert [e.path.name for e in agents.hermes(where(tmp_path, HERMES_HOME=str(home)))] == ["config.yaml"]


def test_yaml_blocks_a_null_parent_is_filled_an_emptied_one_goes_and_the_next_block_stays():
    assert y.set_child("mcp_servers: ~\n", "mcp_servers", "lore", [(0, "lore: 1")]) == "mcp_servers:\n  lore: 1\n"
    text = "mcp_servers:\n  lore:\n    command: x\nmemory:\n  provider: y\n"
    assert y.remove_child(text, "mcp_servers", "lore") == "memory:\n  provider: y\n"
    text = "mcp_servers:\n  other:\n    command: x\nmemory:\n  provider: y\n"
    assert y.remove_child(text, "mcp_servers", "other") == "memory:\n  provider: y\n"
    kept = "mcp_servers:\n  other: 1\n  lore: 2\n"
    assert y.remove_child(kept, "mcp_servers", "lore") == "mcp_servers:\n  other: 1\n"
    assert y.remove_top("mcp_discovery_timeout: 30\n", "mcp_discovery_timeout", "15") == "mcp_discovery_timeout: 30\n"
    assert y.remove_top("a: 1\nmcp_discovery_timeout: 15\n", "mcp_discovery_timeout", "15") == "a: 1\n"


def test_a_file_already_holding_lores_entry_in_its_own_layout_is_left_byte_for_byte(tmp_path):
    w = where(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    settings = tmp_path / "cfg" / "Code" / "User" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"editor.fontSize": 13, "lore.command": [*EXE, "--stdio"]}, indent=4))
    assert install.plan("vscode", w) == []


def test_uninstall_takes_out_an_entry_added_by_hand_without_a_manifest(tmp_path):
    w = where(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_STATE_HOME=str(tmp_path / "state"))
    settings = tmp_path / "cfg" / "Code" / "User" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"editor.fontSize": 13, "lore.command": ["lore-sidecar", "--stdio"]}))
    install.uninstall("vscode", w)
    assert json.loads(settings.read_text()) == {"editor.fontSize": 13}


def test_the_manifest_lives_under_xdg_state_home_and_a_file_install_made_goes_when_only_lore_was_in_it(tmp_path):
    w = where(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_STATE_HOME=str(tmp_path / "state"))
    install.install("vscode", w)
    assert [p.name.split("-")[0] for p in (tmp_path / "state" / "lore" / "installs").iterdir()] == ["vscode"]
    settings = tmp_path / "cfg" / "Code" / "User" / "settings.json"
    settings.write_text(json.dumps(json.loads(settings.read_text()), indent=8))  # the user reformatted it
    install.uninstall("vscode", w)
    assert not settings.exists() and not (tmp_path / "cfg" / "Code").exists()


def test_a_user_only_host_asked_for_a_project_exits_2_and_writes_nothing(tmp_path, capsys):
    from lore_sidecar.setup import commands

    args = argparse.Namespace(host="nvim", project=str(tmp_path), verb="install", dry_run=False)
    assert commands.run(args) == 2
    assert "per user" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_uninstall_after_the_host_rewrote_its_files_keeps_the_users_hooks_and_servers(tmp_path):
    """The host rewrites its config while lore is installed (Claude Code, Codex): uninstall
    then takes lore's entries out of the file as it is now. The user's own hook groups of the
    events lore hooks, their permissions and their other MCP servers stay, and so does what
    the host wrote. The control: right after the install lore's entries are there."""
    project = tmp_path / "proj"
    w_project = where(tmp_path, project=project, XDG_STATE_HOME=str(tmp_path / "state"))
    w_user = where(tmp_path, XDG_STATE_HOME=str(tmp_path / "state"), CODEX_HOME=str(tmp_path / "codex"))
    mine = {"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}]}}
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(mine))
    codex = tmp_path / "codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')

    install.install("claude-code", w_project)
    install.install("codex", w_user)
    doc = json.loads(settings.read_text())
    assert len(doc["hooks"]["Stop"]) == 2 and "mcp__lore" in doc["permissions"]["allow"]  # the control
    assert "lore" in tomlkit.parse(codex.read_text())["mcp_servers"]

    doc["theme"] = "dark"  # the host rewrites its files
    settings.write_text(json.dumps(doc, indent=2))
    codex.write_text(codex.read_text() + '\n[profiles.fast]\nmodel = "o4-mini"\n')
    install.uninstall("claude-code", w_project)
    install.uninstall("codex", w_user)

    assert json.loads(settings.read_text()) == {**mine, "theme": "dark"}
    assert tomlkit.parse(codex.read_text()).unwrap() == {"model": "o3", "mcp_servers": {"docs": {"command": "docs-mcp"}},
                                                         "profiles": {"fast": {"model": "o4-mini"}}}
    assert not list((tmp_path / "state" / "lore" / "installs").iterdir())  # the manifests went too
