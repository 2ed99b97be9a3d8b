"""`lore-sidecar mcp [--harness NAME]`: serve the tools on stdin/stdout until the client
closes them. The workspace is the folder the agent started the server in."""

from __future__ import annotations

import logging
from pathlib import Path

from lore_sidecar import logs

log = logging.getLogger(__name__)


def run_mcp(store_dir: str | None, workspace: str, harness: str | None, *, cli_chose_logging: bool) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.mcp_face.host import Host
    from lore_sidecar.mcp_face.tools import build
    from lore_sidecar.settings import load_settings

    cli = {"storeDir": store_dir} if store_dir else {}
    settings, warnings = load_settings(workspace_root=Path(workspace), cli=cli)
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    host = Host(settings, [workspace], open_engine, warnings)
    try:
        # The SDK points fd 1 at stderr while it serves: only its frames reach stdout.
        build(host, harness).run("stdio")
    finally:
        host.close()
    return 0
