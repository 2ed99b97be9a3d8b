"""`lore-sidecar mcp [--harness NAME]`: serve the tools on stdin/stdout until the client
closes them. The workspace is the folder the agent started the server in."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from lore_sidecar import logs

log = logging.getLogger(__name__)


def run_mcp(store_dir: str | None, workspace: str, harness: str | None, *, cli_chose_logging: bool) -> int:
    from lore_sidecar.app import open_engine
    from lore_sidecar.engine_host import Host
    from lore_sidecar.mcp_face.tools import build
    from lore_sidecar.settings import load_settings

    cli = {"storeDir": store_dir} if store_dir else {}
    settings, warnings = load_settings(workspace_root=Path(workspace), cli=cli)
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    host = Host(settings, [workspace], open_engine, warnings)
    try:
        anyio.run(serve, build(host, harness))
    finally:
        host.close()
    return 0


async def serve(server) -> None:
    """Until the client closes stdin. Only MCP frames reach stdout (see mcp_face/stdio.py)."""
    from mcp.server.stdio import stdio_server

    from lore_sidecar.mcp_face.stdio import claimed_stdio

    async with claimed_stdio() as (lines, sink), stdio_server(stdin=lines, stdout=sink) as (read, write):
        # The SDK's MCPServer.run("stdio") does this over its threaded stdio; the session
        # loop is the same.
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())
