"""GitHub Copilot CLI and Hermes Agent: what each needs, and where (see hosts.py for the
shape of an `Edit`). Copilot takes Claude Code's hook schema and an MCP entry of its own;
Hermes gets lore's memory provider (a plugin folder), an MCP entry and `memory.provider`
in its config.yaml, merged line by line (yaml_block.py)."""

from __future__ import annotations

import json
from pathlib import Path

from lore_sidecar.errors import LoreError
from lore_sidecar.setup import yaml_block as y
from lore_sidecar.setup.hosts import Edit, Where, add_hooks, editors_dir, json_entry, remove_hooks

# Stop carries the transcript (events.jsonl); SessionEnd does not, so it is not needed.
COPILOT_EVENTS = (("SessionStart", None), ("UserPromptSubmit", None), ("PostToolUse", None), ("Stop", None))
COPILOT_TRUST = ("Copilot CLI loads a repository's .github/hooks only in a folder you trust: answer its trust "
                 "prompt once, or pass --trust-folder, or list the folder under trustedFolders in "
                 "$COPILOT_HOME/config.json. lore does not trust folders for you.")
# What lore's processes need from the environment; Hermes passes MCP servers only what `env:` names.
HERMES_ENV_VARS = ("LORE_STORE_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "LORE_LOG_LEVEL", "LORE_LOG_FILE",
                   "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "HOME")
HERMES_DISCOVERY_S = "15"  # `hermes chat` waits this long for MCP tools (its default 1.5 s misses a cold start)


def copilot_home(w: Where) -> Path:
    return Path(w.env["COPILOT_HOME"]) if w.env.get("COPILOT_HOME") else w.home / ".copilot"


def copilot(w: Where) -> list[Edit]:
    home = copilot_home(w)
    server = {"type": "local", "command": w.exe[0], "args": [*w.exe[1:], "mcp", "--harness", "copilot"],
              "tools": ["*"]}

    def hooks(doc: dict) -> None:
        add_hooks(doc, w, "copilot", COPILOT_EVENTS)
        doc.setdefault("version", 1)

    def unhook(doc: dict) -> None:
        remove_hooks(doc)
        if set(doc) == {"version"}:
            doc.pop("version")

    if w.project is not None:
        hook_edit = Edit(w.project / ".github" / "hooks" / "lore.json", "json", hooks, unhook, note=COPILOT_TRUST)
    else:
        hook_edit = Edit(home / "settings.json", "json", lambda d: add_hooks(d, w, "copilot", COPILOT_EVENTS),
                         remove_hooks)
    return [hook_edit, Edit(home / "mcp-config.json", "json", *json_entry(("mcpServers", "lore"), server))]


# -- Hermes -----------------------------------------------------------------------------------
def hermes_home(w: Where) -> Path:
    return Path(w.env["HERMES_HOME"]) if w.env.get("HERMES_HOME") else w.home / ".hermes"


def provider_source(w: Where) -> str:
    """The memory provider, starting this lore-sidecar instead of PATH's."""
    text = (editors_dir() / "hermes" / "lore" / "__init__.py").read_text()
    default = 'LORE_COMMAND = ["lore-sidecar"]'
    if default not in text:
        raise LoreError("installBroken", "editors/hermes/lore/__init__.py no longer has the default command to set")
    return text.replace(default, f"LORE_COMMAND = {json.dumps(list(w.exe))}")


def hermes_mcp_entry(w: Where) -> list[tuple[int, str]]:
    env = {k: w.env[k] for k in HERMES_ENV_VARS if w.env.get(k)}
    entry = [(0, "lore:"), (1, f"command: {y.scalar(w.exe[0])}"),
             (1, f"args: {y.scalar([*w.exe[1:], 'mcp', '--harness', 'hermes'])}")]
    if env:
        entry += [(1, "env:"), *((2, f"{k}: {y.scalar(v)}") for k, v in env.items())]
    return [*entry, (1, "timeout: 120"), (1, "connect_timeout: 60")]


def active_provider(config: Path) -> str:
    try:
        text = config.read_text()
    except OSError:
        return ""
    return y.get(text, "memory", "provider") or ""


def hermes(w: Where) -> list[Edit]:
    home = hermes_home(w)
    config = home / "config.yaml"
    other = active_provider(config)
    mcp_only = other not in ("", "lore")

    def add(text: str) -> str:
        text = y.set_child(text, "mcp_servers", "lore", hermes_mcp_entry(w))
        current = y.top(text, "mcp_discovery_timeout")
        try:
            low = current is None or float(current) < float(HERMES_DISCOVERY_S)
        except ValueError:
            low = False
        if low:
            text = y.set_top(text, "mcp_discovery_timeout", HERMES_DISCOVERY_S)
        if not mcp_only:
            text = y.set_child(text, "memory", "provider", [(0, "provider: lore")])
        return text

    def remove(text: str) -> str:
        text = y.remove_child(text, "mcp_servers", "lore")
        text = y.remove_top(text, "mcp_discovery_timeout", HERMES_DISCOVERY_S)
        if y.get(text, "memory", "provider") == "lore":
            text = y.remove_child(text, "memory", "provider")
        return text

    note = (f"Hermes already uses the memory provider {other!r} and allows one at a time: lore was added as MCP "
            "tools only (mcp__lore__*). To make lore the memory provider instead, set `memory: provider: lore` in "
            f"{config} (or `hermes memory setup`) and run this again." if mcp_only else
            "Hermes: lore is the memory provider (recall before each turn, capture after it) and its MCP tools "
            "appear as mcp__lore__*.")
    plugin = home / "plugins" / "lore"
    files = [] if mcp_only else [
        Edit(plugin / "__init__.py", "file", content=provider_source(w)),
        Edit(plugin / "plugin.yaml", "file", content=(editors_dir() / "hermes" / "lore" / "plugin.yaml").read_text())]
    return [*files, Edit(config, "text", add, remove, note=note)]


def notes(edits: list[Edit]) -> list[str]:
    return [e.note for e in edits if e.note]
