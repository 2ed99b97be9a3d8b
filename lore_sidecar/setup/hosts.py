"""What each host needs, and where: found the way the host itself finds its configuration.

An `Edit` is a JSON or TOML document to merge entries into (and take them out of), or a
file to place. Everything here is pure: `install.py` reads, applies and writes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.setup import formats as f
from lore_sidecar.spawn import module_command

CLAUDE_EVENTS = (("SessionStart", None), ("UserPromptSubmit", None), ("PostToolUse", "*"), ("Stop", None),
                 ("SessionEnd", None))
CODEX_EVENTS = (("SessionStart", None), ("UserPromptSubmit", None), ("PostToolUse", "*"), ("Stop", None))
# Variables Codex must pass on to the MCP server so it uses the same store as the hooks.
CODEX_ENV_VARS = ["LORE_STORE_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "LORE_LOG_LEVEL", "LORE_LOG_FILE",
                  "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
HELIX_LANGUAGES = (("python", ["pylsp"]), ("rust", ["rust-analyzer"]), ("markdown", ["marksman"]))
SHARED = Path(sys.prefix) / "share" / "lore-sidecar" / "editors"  # installed from a wheel (data files)
CHECKOUT = Path(__file__).resolve().parents[2] / "editors"  # a source tree, or an editable install
OURS = re.compile(r"(^|[/\\'\" ])lore-sidecar['\"]?\s+hook\b|-m\s+lore_sidecar\s+hook\b")


def editors_dir() -> Path:
    """The shipped client files (plugins, extensions, Lua): in the wheel, else the checkout."""
    for d in (SHARED, CHECKOUT):
        if (d / "shared" / "lore-client.ts").exists():
            return d
    raise LoreError("installBroken", "the editor files are missing from this installation")


@dataclass(frozen=True)
class Edit:
    path: Path
    kind: str  # "json" | "toml" | "file" | "text" (add/remove return the new text: YAML, yaml_block.py)
    add: Callable[[Any], Any] | None = None
    remove: Callable[[Any], Any] | None = None
    content: str | None = None  # kind "file"
    note: str | None = None  # said after installing (what the user still has to do, or chose)
    # Uninstall of a file changed since install (the host rewrote it), when its content before
    # install is known: (doc now, doc before install) -> puts back what `add` changed in place
    # rather than added (a value the user may have had before). TOML only.
    restore: Callable[[Any, Any], None] | None = None


@dataclass(frozen=True)
class Where:
    """Where a host's files live: the user's home and environment, and the project if any."""
    home: Path
    env: Mapping[str, str]
    project: Path | None
    exe: tuple[str, ...]

    def xdg(self, name: str, default: str) -> Path:
        value = self.env.get(name)
        return Path(value) if value else self.home / default


def this_executable() -> tuple[str, ...]:
    """How a host should start this lore-sidecar: the console script beside this Python if
    there is one (a virtualenv), else the one on PATH, else `python -m lore_sidecar`."""
    beside = Path(sys.executable).parent / "lore-sidecar"
    if beside.exists():
        return (str(beside),)
    found = shutil.which("lore-sidecar")
    return (str(Path(found).resolve()),) if found else tuple(module_command("lore_sidecar"))


def command_line(args: tuple[str, ...] | list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


# -- Claude Code ------------------------------------------------------------------------------
def claude(w: Where) -> list[Edit]:
    config = Path(w.env["CLAUDE_CONFIG_DIR"]) if w.env.get("CLAUDE_CONFIG_DIR") else w.home / ".claude"
    server = mcp_server(w, "claude-code")
    if w.project is not None:
        def settings(doc: dict) -> None:
            add_hooks(doc, w, "claude-code", CLAUDE_EVENTS)
            allow_tools(doc)
            doc["enabledMcpjsonServers"] = f.add_unique(doc.get("enabledMcpjsonServers", []), "lore")

        def unsettle(doc: dict) -> None:
            remove_hooks(doc)
            disallow_tools(doc)
            _remove_value(doc, "enabledMcpjsonServers", "lore")

        return [Edit(w.project / ".claude" / "settings.json", "json", settings, unsettle),
                Edit(w.project / ".mcp.json", "json", *json_entry(("mcpServers", "lore"), server))]
    mcp_file = config / ".claude.json" if w.env.get("CLAUDE_CONFIG_DIR") else w.home / ".claude.json"

    def user_settings(doc: dict) -> None:
        add_hooks(doc, w, "claude-code", CLAUDE_EVENTS)
        allow_tools(doc)

    def user_unsettle(doc: dict) -> None:
        remove_hooks(doc)
        disallow_tools(doc)

    return [Edit(config / "settings.json", "json", user_settings, user_unsettle),
            Edit(mcp_file, "json", *json_entry(("mcpServers", "lore"), server))]


def allow_tools(doc: dict) -> None:
    perms = doc.setdefault("permissions", {})
    perms["allow"] = f.add_unique(perms.get("allow", []), "mcp__lore")


def disallow_tools(doc: dict) -> None:
    perms = doc.get("permissions")
    if isinstance(perms, dict):
        _remove_value(perms, "allow", "mcp__lore")
        if not perms:
            doc.pop("permissions")


def mcp_server(w: Where, harness: str) -> dict[str, Any]:
    return {"type": "stdio", "command": w.exe[0], "args": [*w.exe[1:], "mcp", "--harness", harness]}


# -- hooks (Claude Code's schema; Codex uses the same) -------------------------------------------
def hook_group(w: Where, harness: str, event: str, matcher: str | None) -> dict[str, Any]:
    group: dict[str, Any] = {"matcher": matcher} if matcher else {}
    group["hooks"] = [{"type": "command", "command": command_line([*w.exe, "hook", "--harness", harness, event]),
                       "timeout": 10}]
    return group


def is_ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return bool(hooks) and all(isinstance(h, dict) and OURS.search(str(h.get("command", ""))) for h in hooks)


def add_hooks(doc: dict, w: Where, harness: str, events: tuple[tuple[str, str | None], ...]) -> None:
    """Our group per event: left alone when already there, else put where an older lore
    group was (another install's path), else appended; other groups are never touched."""
    hooks = doc.setdefault("hooks", {})
    for event, matcher in events:
        groups = list(hooks.get(event, []))
        mine = hook_group(w, harness, event, matcher)
        ours = [i for i, g in enumerate(groups) if is_ours(g)]
        if mine in groups and len(ours) == 1:
            continue
        if ours:
            groups[ours[0]] = mine
            groups = [g for i, g in enumerate(groups) if i not in ours[1:]]
        else:
            groups.append(mine)
        hooks[event] = groups


def remove_hooks(doc: dict) -> None:
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        kept = [g for g in hooks[event] if not is_ours(g)]
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event)
    if not hooks:
        doc.pop("hooks")


def json_entry(keys: tuple[str, ...], value: Any) -> tuple[Callable, Callable]:
    def add(doc: dict) -> None:
        here = doc
        for k in keys[:-1]:
            here = here.setdefault(k, {})
        here[keys[-1]] = value

    def remove(doc: dict) -> None:
        f.prune_empty(doc, *keys)

    return add, remove


def _remove_value(doc: dict, key: str, value: Any) -> None:
    items = doc.get(key)
    if isinstance(items, list) and value in items:
        items.remove(value)
        if not items:
            doc.pop(key)


# -- Codex ------------------------------------------------------------------------------------------
def codex(w: Where) -> list[Edit]:
    home = Path(w.env["CODEX_HOME"]) if w.env.get("CODEX_HOME") else w.home / ".codex"
    project = w.project

    def config(doc: Any) -> None:
        server = f.table(doc, "mcp_servers", "lore")
        wanted = {"command": w.exe[0], "args": [*w.exe[1:], "mcp", "--harness", "codex"], "env_vars": CODEX_ENV_VARS,
                  "startup_timeout_sec": 20, "tool_timeout_sec": 10}
        for key, value in wanted.items():
            if server.get(key) != value:
                server[key] = value
        if project is not None:  # project hooks run only in a trusted project
            trust = f.table(doc, "projects", str(project))
            if trust.get("trust_level") != "trusted":
                trust["trust_level"] = "trusted"

    def unconfig(doc: Any) -> None:
        servers = doc.get("mcp_servers")
        if servers is not None and "lore" in servers:
            del servers["lore"]
            if not servers:
                del doc["mcp_servers"]

    def untrust(doc: Any, before: Any) -> None:
        """The project's trust as it was before install: Codex runs a trusted project's own
        hooks, so a trust install granted must not outlive the uninstall."""
        if project is None:
            return
        def entry(d: Any) -> Any:
            projects = d.get("projects")
            got = projects.get(str(project)) if isinstance(projects, dict) else None
            return got if isinstance(got, dict) else None  # a malformed file: not a table

        was = (entry(before) or {}).get("trust_level")
        here = entry(doc)
        if here is None or here.get("trust_level") != "trusted" or was == "trusted":
            return  # not ours to take back: the user changed it since, or had it already
        if was is not None:
            here["trust_level"] = was
        else:
            f.prune_empty(doc, "projects", str(project), "trust_level")

    def hooks(doc: dict) -> None:
        add_hooks(doc, w, "codex", CODEX_EVENTS)

    hooks_file = project / ".codex" / "hooks.json" if project is not None else home / "hooks.json"
    return [Edit(home / "config.toml", "toml", config, unconfig, restore=untrust),
            Edit(hooks_file, "json", hooks, remove_hooks)]


# -- Pi and OpenCode: plugin files, and OpenCode's MCP entry ----------------------------------------
def client_source(w: Where, editors: Path) -> str:
    """The shared TypeScript client, defaulting to this executable instead of PATH's."""
    text = (editors / "shared" / "lore-client.ts").read_text()
    default = '["lore-sidecar", "--stdio"]'
    if default not in text:
        raise LoreError("installBroken", "editors/shared/lore-client.ts no longer has the default command to set")
    return text.replace(default, json.dumps([*w.exe, "--stdio"]))


def pi(w: Where) -> list[Edit]:
    editors = editors_dir()
    agent = Path(w.env["PI_CODING_AGENT_DIR"]) if w.env.get("PI_CODING_AGENT_DIR") else w.home / ".pi" / "agent"
    base = (w.project / ".pi" if w.project is not None else agent) / "extensions" / "lore"
    # Pi loads `extensions/<name>/index.ts`; its client sits beside it.
    entry = (editors / "pi" / "lore.ts").read_text().replace('"../shared/lore-client.ts"', '"./lore-client.ts"')
    return [Edit(base / "index.ts", "file", content=entry), Edit(base / "lore-client.ts", "file", content=client_source(w, editors))]


def opencode(w: Where) -> list[Edit]:
    editors = editors_dir()
    base = w.project / ".opencode" if w.project is not None else w.xdg("XDG_CONFIG_HOME", ".config") / "opencode"
    config = w.project / "opencode.json" if w.project is not None else base / "opencode.json"
    if config.with_suffix(".jsonc").exists():
        raise LoreError("configUnreadable", f"{config.with_suffix('.jsonc')} has comments; add the mcp entry from "
                        "editors/opencode/opencode.json by hand")
    server = {"type": "local", "command": [*w.exe, "mcp", "--harness", "opencode"], "enabled": True, "timeout": 10000}
    return [Edit(base / "plugin" / "lore.ts", "file", content=(editors / "opencode" / "lore.ts").read_text()),
            Edit(base / "shared" / "lore-client.ts", "file", content=client_source(w, editors)),
            Edit(config, "json", *json_entry(("mcp", "lore"), server))]


# -- editors ----------------------------------------------------------------------------------------
def nvim(w: Where) -> list[Edit]:
    src = editors_dir() / "nvim"
    pack = w.xdg("XDG_DATA_HOME", ".local/share") / "nvim" / "site" / "pack" / "lore" / "start" / "lore-sidecar"
    setup = ("-- Written by `lore-sidecar install nvim` (undone by `lore-sidecar uninstall nvim`).\n"
             "-- Set vim.g.lore_no_setup = true before plugins load to call require('lore').setup() yourself.\n"
             "if vim.g.lore_no_setup then return end\n"
             f"require(\"lore\").setup({{ cmd = {{ {', '.join(json.dumps(a) for a in [*w.exe, '--stdio'])} }} }})\n")
    return [Edit(pack / "lua" / "lore" / "init.lua", "file", content=(src / "lua" / "lore" / "init.lua").read_text()),
            Edit(pack / "plugin" / "lore.lua", "file", content=(src / "plugin" / "lore.lua").read_text()),
            Edit(pack / "plugin" / "lore_setup.lua", "file", content=setup)]


def vscode(w: Where) -> list[Edit]:
    if sys.platform == "darwin":
        user = w.home / "Library" / "Application Support" / "Code" / "User"
    else:
        user = w.xdg("XDG_CONFIG_HOME", ".config") / "Code" / "User"
    return [Edit(user / "settings.json", "json", *json_entry(("lore.command",), [*w.exe, "--stdio"]))]


def helix(w: Where) -> list[Edit]:
    path = (w.project / ".helix" if w.project is not None else w.xdg("XDG_CONFIG_HOME", ".config") / "helix") / "languages.toml"

    def add(doc: Any) -> None:
        server = f.table(doc, "language-server", "lore")
        for key, value in (("command", w.exe[0]), ("args", [*w.exe[1:], "--stdio"])):
            if server.get(key) != value:
                server[key] = value
        languages = doc.get("language")
        if languages is None:
            import tomlkit

            languages = doc["language"] = tomlkit.aot()
        for name, defaults in HELIX_LANGUAGES:
            entry = next((e for e in languages if e.get("name") == name), None)
            if entry is None:
                languages.append({"name": name, "language-servers": [*defaults, "lore"]})
            elif "lore" not in entry.get("language-servers", defaults):
                entry["language-servers"] = [*entry.get("language-servers", defaults), "lore"]

    def remove(doc: Any) -> None:
        servers = doc.get("language-server")
        if servers is not None and "lore" in servers:
            del servers["lore"]
            if not servers:
                del doc["language-server"]
        languages = doc.get("language")
        if languages is None:
            return
        for name, defaults in HELIX_LANGUAGES:
            for i, entry in enumerate(list(languages)):
                if entry.get("name") != name or "lore" not in entry.get("language-servers", []):
                    continue
                rest = [s for s in entry["language-servers"] if s != "lore"]
                if rest == defaults and set(entry) == {"name", "language-servers"}:
                    del languages[i]  # the entry install added
                else:
                    entry["language-servers"] = rest
        if not len(languages):
            del doc["language"]

    return [Edit(path, "toml", add, remove)]


BUILDERS: dict[str, Callable[[Where], list[Edit]]] = {
    "claude-code": claude, "codex": codex, "pi": pi, "opencode": opencode, "nvim": nvim, "vscode": vscode,
    "helix": helix,
}


def where(project: str | None, env: Mapping[str, str] | None = None) -> Where:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    return Where(home=home, env=env, project=Path(project).resolve() if project else None, exe=this_executable())
