"""`lore-sidecar install` / `uninstall` against a temporary home and project that already
hold configs with unrelated entries: those survive, lore's entries appear, a second run is
a no-op, a dry run changes nothing, and uninstall restores every file byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

HOSTS = ("claude-code", "codex", "pi", "opencode", "nvim", "vscode", "helix")


def run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XDG_") and k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR")}
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], env={**env, "HOME": str(home)},
                          capture_output=True, text=True, timeout=60)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def lab(tmp_path):
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    existing = {
        write(project / ".claude" / "settings.json", json.dumps({
            "model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}],
                      "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}},
            indent=4)),
        write(project / ".mcp.json", json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}})),
        write(home / ".claude" / "settings.json", json.dumps({"theme": "dark"})),
        write(home / ".claude.json", json.dumps({"numStartups": 7, "mcpServers": {"db": {"command": "db-mcp"}}})),
        write(home / ".codex" / "config.toml", '# my codex settings\nmodel = "o3"  # the default\n\n'
                                               '[mcp_servers.docs]\ncommand = "docs-mcp"\n'),
        write(project / "opencode.json", json.dumps({"$schema": "https://opencode.ai/config.json", "theme": "tokyonight"})),
        write(project / ".opencode" / "plugin" / "other.ts", "export const Other = async () => ({})\n"),
        write(home / ".config" / "Code" / "User" / "settings.json", json.dumps({"editor.fontSize": 13})),
        write(project / ".helix" / "languages.toml", '# mine\n[[language]]\nname = "python"\n'
                                                     'language-servers = ["ruff"]\n'),
        write(home / ".local" / "share" / "nvim" / "site" / "pack" / "mine" / "start" / "x" / "plugin" / "x.lua", "-- x\n"),
    }
    yield home, project, {p: p.read_bytes() for p in existing}


def snapshot(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for r in roots for p in sorted(r.rglob("*"))
            if p.is_file() and ".local/state/lore" not in str(p)
            and ".local/share/lore" not in str(p)}  # the store (install keeps the MCP handshake there) is data


def scope(host: str, project: Path) -> list[str]:
    return ["--user"] if host in ("nvim", "vscode") else ["--project", str(project)]


def test_every_host_installs_keeping_what_was_there_and_uninstalls_byte_for_byte(lab):
    home, project, before = lab
    originals = snapshot(home, project)
    for host in HOSTS:
        first = run(home, "install", host, *scope(host, project))
        assert first.returncode == 0, (host, first.stderr)
        assert "installed" in first.stdout
    # Unrelated entries survive; lore's are there.
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus" and "Bash(ls:*)" in settings["permissions"]["allow"]
    assert "mcp__lore" in settings["permissions"]["allow"] and settings["enabledMcpjsonServers"] == ["lore"]
    commands = [h["command"] for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert commands[0] == "my-own-hook" and commands[1].endswith("hook --harness claude-code UserPromptSubmit")
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "audit"
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert mcp["github"] == {"command": "gh-mcp"} and mcp["lore"]["args"] == ["mcp", "--harness", "claude-code"]
    codex = (home / ".codex" / "config.toml").read_text()
    assert codex.startswith("# my codex settings\nmodel = \"o3\"  # the default\n")  # comments kept
    parsed = tomllib.loads(codex)
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp"} and parsed["mcp_servers"]["lore"]["args"][0] == "mcp"
    assert parsed["projects"][str(project)]["trust_level"] == "trusted"
    assert json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PostToolUse"][0]["matcher"] == "*"
    opencode = json.loads((project / "opencode.json").read_text())
    assert opencode["theme"] == "tokyonight" and opencode["mcp"]["lore"]["command"][-1] == "opencode"
    assert (project / ".opencode" / "plugin" / "other.ts").exists() and (project / ".opencode" / "plugin" / "lore.ts").exists()
    client = (project / ".pi" / "extensions" / "lore" / "lore-client.ts").read_text()
    assert '"--stdio"]' in client and '["lore-sidecar", "--stdio"]' not in client  # this executable, not PATH's
    assert '"./lore-client.ts"' in (project / ".pi" / "extensions" / "lore" / "index.ts").read_text()
    helix = tomllib.loads((project / ".helix" / "languages.toml").read_text())
    assert {e["name"]: e["language-servers"] for e in helix["language"]}["python"] == ["ruff", "lore"]
    assert json.loads((home / ".config" / "Code" / "User" / "settings.json").read_text())["editor.fontSize"] == 13
    assert (home / ".local/share/nvim/site/pack/lore/start/lore-sidecar/plugin/lore_setup.lua").exists()
    # Each changed file has its backup.
    assert (project / ".mcp.json.lore-backup").read_bytes() == before[project / ".mcp.json"]

    installed = snapshot(home, project)
    for host in HOSTS:  # a second run changes nothing
        again = run(home, "install", host, *scope(host, project))
        assert again.returncode == 0 and "nothing changed" in again.stdout, (host, again.stdout)
        dry = run(home, "install", host, "--dry-run", *scope(host, project))
        assert "nothing to change" in dry.stdout
    assert snapshot(home, project) == installed

    for host in HOSTS:
        gone = run(home, "uninstall", host, *scope(host, project))
        assert gone.returncode == 0, (host, gone.stderr)
    assert snapshot(home, project) == originals  # byte for byte; install's own files and backups gone
    assert run(home, "uninstall", "codex", "--project", str(project)).stdout.count("nothing changed") == 1


def test_a_dry_run_prints_the_diff_and_changes_nothing(lab):
    home, project, _ = lab
    originals = snapshot(home, project)
    dry = run(home, "install", "claude-code", "--project", str(project), "--dry-run")
    assert dry.returncode == 0
    assert "+++ " + str(project / ".mcp.json") in dry.stdout and '+    "lore": {' in dry.stdout
    assert snapshot(home, project) == originals


def test_uninstall_after_the_host_rewrote_its_file_takes_out_only_lores_entries(lab):
    home, _, _ = lab
    assert run(home, "install", "claude-code", "--user").returncode == 0
    state = home / ".claude.json"
    doc = json.loads(state.read_text())
    doc["numStartups"] = 8  # Claude Code rewrites this file as it runs
    state.write_text(json.dumps(doc))
    assert run(home, "uninstall", "claude-code", "--user").returncode == 0
    assert json.loads(state.read_text()) == {"numStartups": 8, "mcpServers": {"db": {"command": "db-mcp"}}}
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {"theme": "dark"}  # untouched since: restored


@pytest.mark.parametrize("before", [None, "untrusted", "trusted"])
def test_uninstall_after_codex_rewrote_its_config_takes_back_only_the_trust_install_granted(lab, before):
    """Codex runs a trusted project's own hooks, so the trust `install codex --project` grants
    must go with the uninstall even after Codex rewrote config.toml (no byte-for-byte restore
    then): absent before → absent again; "untrusted" before → "untrusted" again. Control: a
    project the user had trusted already stays trusted."""
    home, project, _ = lab
    config = home / ".codex" / "config.toml"
    if before is not None:
        config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "{before}"\n')
    assert run(home, "install", "codex", "--project", str(project)).returncode == 0
    assert tomllib.loads(config.read_text())["projects"][str(project)]["trust_level"] == "trusted"
    config.write_text(config.read_text().replace('model = "o3"', 'model = "o4"'))  # Codex rewrites it as it runs
    gone = run(home, "uninstall", "codex", "--project", str(project))
    assert gone.returncode == 0, gone.stderr
    after = tomllib.loads(config.read_text())
    assert after["model"] == "o4" and "lore" not in after.get("mcp_servers", {})  # the rewrite kept, lore's entry gone
    assert after.get("projects", {}).get(str(project), {}).get("trust_level") == before


def test_a_config_with_comments_is_refused_and_left_alone(lab):
    home, project, _ = lab
    jsonc = write(home / ".config" / "Code" / "User" / "settings.json", '{\n  // mine\n  "editor.fontSize": 13\n}\n')
    before = jsonc.read_bytes()
    refused = run(home, "install", "vscode")
    assert refused.returncode == 2 and "not plain JSON" in refused.stderr and str(jsonc) in refused.stderr
    assert jsonc.read_bytes() == before
    assert run(home, "install", "helix", "--project", str(project)).returncode == 0  # control: another host installs


def test_user_only_hosts_refuse_a_project(lab):
    home, project, _ = lab
    r = run(home, "install", "nvim", "--project", str(project))
    assert r.returncode == 2 and "per user" in r.stderr


@pytest.mark.slow
def test_an_installed_wheel_carries_the_client_files_install_places(tmp_path):
    """Not only a checkout: the wheel ships the plugin and extension files (as data files).

    The wheel goes into a fresh virtualenv of its own. Its dependencies are the ones the suite
    runs with, wherever those live: a system Python's site-packages, or the virtualenv the suite
    itself runs in (`--system-site-packages` would see only the base interpreter's, which in
    a virtualenv lacks them). They are listed as plain paths (not site dirs), so the suite's own
    editable install of the checkout is not loaded: lore_sidecar must come from the wheel."""
    import site

    root = Path(__file__).resolve().parents[2]
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "-q", "-w", str(wheels)], check=True,
                   capture_output=True, timeout=300)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True,
                         capture_output=True, text=True, timeout=60).stdout.strip()
    outer = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    (Path(own) / "zz-suite-deps.pth").write_text("".join(f"{d}\n" for d in outer if Path(d).is_dir()))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    str(next(wheels.glob("*.whl")))], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    where = subprocess.run([str(py), "-c", "import lore_sidecar; print(lore_sidecar.__file__)"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert where.returncode == 0 and where.stdout.strip().startswith(own), (where.stdout, where.stderr)  # the wheel's
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    out = subprocess.run([str(venv / "bin" / "lore-sidecar"), "install", "pi", "--project", str(project)],
                         env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    client = (project / ".pi" / "extensions" / "lore" / "lore-client.ts").read_text()
    assert str(venv / "bin" / "lore-sidecar") in client  # the venv's own executable


@pytest.mark.slow  # an MCP host's install keeps the MCP handshake: a few seconds each
def test_user_installs_go_where_each_host_looks_when_its_own_variable_moves_it(tmp_path):
    """README: the host's configuration is "found the way the host finds it" — CLAUDE_CONFIG_DIR,
    CODEX_HOME, PI_CODING_AGENT_DIR, XDG_CONFIG_HOME. With each variable set, lore's entries land
    under it and nothing is written to the default place; uninstall with the same variable puts
    it all back. The control: the same install without the variable writes the default place
    (here for Pi; the other hosts' default places are the first test's)."""
    moved = {"claude-code": ("CLAUDE_CONFIG_DIR", "settings.json"), "codex": ("CODEX_HOME", "config.toml"),
             "pi": ("PI_CODING_AGENT_DIR", "extensions/lore/index.ts"),
             "opencode": ("XDG_CONFIG_HOME", "opencode/opencode.json"), "helix": ("XDG_CONFIG_HOME", "helix/languages.toml")}
    defaults = {"claude-code": ".claude/settings.json", "codex": ".codex/config.toml",
                "pi": ".pi/agent/extensions/lore/index.ts", "opencode": ".config/opencode/opencode.json",
                "helix": ".config/helix/languages.toml"}

    def run_with(home: Path, extra: dict, *args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("XDG_") and k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR")}
        return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], env={**env, "HOME": str(home), **extra},
                              capture_output=True, text=True, timeout=60)

    for host, (var, rel) in moved.items():
        home, elsewhere = tmp_path / host / "home", tmp_path / host / "elsewhere"
        home.mkdir(parents=True)
        elsewhere.mkdir()
        env = {var: str(elsewhere)}
        out = run_with(home, env, "install", host, "--user")
        assert out.returncode == 0, (host, out.stderr)
        assert "lore" in (elsewhere / rel).read_text(), host
        assert not (home / defaults[host]).exists(), (host, "wrote the default place too")
        assert run_with(home, env, "uninstall", host, "--user").returncode == 0
        assert [p for p in elsewhere.rglob("*") if p.is_file()] == [], host  # all taken back
    control = tmp_path / "control"
    control.mkdir()
    assert run_with(control, {}, "install", "pi", "--user").returncode == 0
    assert "lore" in (control / defaults["pi"]).read_text()


def test_a_reinstall_from_another_executable_still_uninstalls_to_the_original_bytes(tmp_path):
    """`doctor` says "run install again from the lore-sidecar you want" when a config starts
    another one: that second install changes lore's entries, and uninstall must still restore
    the file as it was before lore's first install (not the first install's output). The
    control: after the second install the file names the new executable."""
    from lore_sidecar.setup import install as inst
    from lore_sidecar.setup.hosts import Where

    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    helix = write(project / ".helix" / "languages.toml", '# mine\n[[language]]\nname = "python"\n'
                                                         'language-servers = ["ruff"]\n')
    original = helix.read_bytes()
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    old = Where(home=home, env=env, project=project, exe=("/opt/old/bin/lore-sidecar",))
    new = Where(home=home, env=env, project=project, exe=("/opt/new/bin/lore-sidecar",))
    assert inst.install("helix", old)
    assert inst.install("helix", new)  # the command changed: something to write
    assert "/opt/new/bin/lore-sidecar" in helix.read_text() and "/opt/old/" not in helix.read_text()  # the control
    inst.uninstall("helix", new)
    assert helix.read_bytes() == original
    assert not (project / ".helix" / "languages.toml.lore-backup").exists()


def test_claude_config_dir_moves_the_mcp_entry_too_and_nothing_lands_in_home(tmp_path):
    """Claude Code keeps `.claude.json` (its MCP servers) inside CLAUDE_CONFIG_DIR when that is
    set: lore's server entry goes there, and nothing is written under the home folder. The
    control: without the variable the entry is in ~/.claude.json."""
    from lore_sidecar.setup import install as inst
    from lore_sidecar.setup.hosts import Where

    home, elsewhere, state = tmp_path / "home", tmp_path / "elsewhere", tmp_path / "state"
    home.mkdir()
    elsewhere.mkdir()
    exe = ("/opt/bin/lore-sidecar",)
    moved = Where(home=home, env={"HOME": str(home), "XDG_STATE_HOME": str(state), "CLAUDE_CONFIG_DIR": str(elsewhere)},
                  project=None, exe=exe)
    inst.install("claude-code", moved)
    assert "lore" in json.loads((elsewhere / ".claude.json").read_text())["mcpServers"]
    assert [p for p in home.rglob("*") if p.is_file()] == []  # not ~/.claude.json, not ~/.claude/
    inst.uninstall("claude-code", moved)
    assert [p for p in elsewhere.rglob("*") if p.is_file()] == []
    control_home = tmp_path / "control"
    control_home.mkdir()
    inst.install("claude-code", Where(home=control_home, env={"HOME": str(control_home), "XDG_STATE_HOME": str(state)},
                                      project=None, exe=exe))
    assert "lore" in json.loads((control_home / ".claude.json").read_text())["mcpServers"]
