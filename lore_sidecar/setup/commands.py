"""The `install` and `uninstall` verbs: what they print."""

from __future__ import annotations

import argparse
import sys

from lore_sidecar.setup import USER_ONLY
from lore_sidecar.setup import install as inst
from lore_sidecar.setup.hosts import command_line, where
from lore_sidecar.setup.plan import edits

AFTER = {
    "claude-code": "Claude Code: hooks put <recall> leads into each prompt; the MCP tools (mcp__lore) let the "
                   "agent open and keep memory. In a project, trust the folder once when Claude Code asks.",
    "codex": "Codex: the MCP tools appear under mcp__lore. Codex asks you to review new hooks once (/hooks in "
             "the TUI) before it runs them.",
    "pi": "Pi: the extension loads on the next start (or /reload).",
    "opencode": "OpenCode: the plugin and the MCP tools load on the next start.",
    "copilot": "Copilot CLI: hooks put <recall> leads into each prompt and capture tool output; the MCP tools "
               "appear as lore-lore_recall, ... (servers in $COPILOT_HOME/mcp-config.json).",
    "hermes": "Hermes: the next `hermes` session loads it.",
    "nvim": "Neovim: lore-sidecar starts with the next Neovim; :LoreRecall, :LoreRemember, :LoreStatus.",
    "vscode": "VS Code: the setting lore.command now starts this lore-sidecar. The extension itself: "
              "build editors/vscode into a .vsix (see editors/README.md) and `code --install-extension` it.",
    "helix": "Helix: `lore` is a language server for python, rust and markdown; add it to other languages' "
             "language-servers as you like.",
}


def run(args: argparse.Namespace) -> int:
    if args.host in USER_ONLY and args.project:
        print(f"lore-sidecar: {args.host} is set up per user; drop --project", file=sys.stderr)
        return 2
    w = where(args.project)
    removing = args.verb == "uninstall"
    if args.dry_run:
        changes = inst.plan(args.host, w, removing=removing)
        text = inst.diff(changes)
        print(text if text else f"{args.host}: nothing to change")
        return 0
    changes = (inst.uninstall if removing else inst.install)(args.host, w)
    scope = f"project {w.project}" if w.project else "user"
    if not changes:
        print(f"{args.host} ({scope}): already {'removed' if removing else 'installed'}; nothing changed")
        return 0
    for c in changes:
        if removing:
            what = "removed" if c.after is None else ("restored" if c.before is not None else "written")
        else:
            what = "created" if c.before is None else f"merged (backup: {c.path.name}.lore-backup)"
        print(f"  {what}: {c.path}")
    if removing:
        print(f"{args.host} ({scope}): lore-sidecar removed")
    else:
        print(f"{args.host} ({scope}): installed, starting {command_line(list(w.exe))}")
        print(AFTER[args.host])
        for note in dict.fromkeys(e.note for e in edits(args.host, w) if e.note):
            print(note)
    if not removing and args.host in MCP_HOSTS:
        # Some agents send their first request before a slow MCP server has answered: the
        # handshake kept now is answered at once from the first session on (mcp_face/handshake.py).
        from lore_sidecar.mcp_face.handshake import keep

        # The handshake does not depend on these; off, the run loads no model and indexes nothing.
        quiet = {"LORE_EMBEDDER": "none", "LORE_FILES_EMBEDDER": "none", "LORE_INDEX_WORKSPACE": "false",
                 "LORE_WATCH": "false", "LORE_DISTILLER": "off"}
        # Up to 60 s: one server per protocol starts at once, and on a busy 2-core machine 20 s
        # kept none of five (then the host's first session may list no lore tools).
        keep([*w.exe, "mcp", "--harness", args.host], cwd=str(w.project or w.home), env={**w.env, **quiet},
             protocols=HOST_PROTOCOLS.get(args.host), timeout_s=60)
    return 0


MCP_HOSTS = ("claude-code", "codex", "opencode", "copilot", "hermes")
# The MCP protocol versions a host is known to open with (others: all the usual ones).
HOST_PROTOCOLS = {"copilot": ("2026-07-28",), "hermes": ("2025-11-25",)}
