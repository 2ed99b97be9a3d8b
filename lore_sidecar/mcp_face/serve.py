"""`lore-sidecar mcp [--harness NAME]`: serve the tools on stdin/stdout until the client
closes them. The workspace is the folder the agent started the server in."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import anyio

from lore_sidecar import logs

log = logging.getLogger(__name__)


def run_mcp(store_dir: str | None, workspace: str, harness: str | None, *, cli_chose_logging: bool) -> int:
    from lore_sidecar.mcp_face.handshake import Handshake
    from lore_sidecar.mcp_face.stdio import claim
    from lore_sidecar.settings import load_settings

    cli = {"storeDir": store_dir} if store_dir else {}
    settings, warnings = load_settings(workspace_root=Path(workspace), cli=cli)
    logs.apply_settings(settings, cli_chose=cli_chose_logging)
    for w in warnings:
        log.warning("settings: %s", w)
    # The handshake is read (and, when kept from an earlier start, answered) while the SDK
    # and the engine load on another thread: see mcp_face/handshake.py.
    wires = claim()
    loading = threading.Thread(target=_load_heavy, name="lore-mcp-import", daemon=True)
    loading.start()
    early = Handshake(settings.store_dir / "mcp", harness, wires.wire_in, wires.wire_out)
    try:
        early.run()
    except OSError as exc:
        log.warning("reading the MCP handshake: %s", exc)
    loading.join()

    from lore_sidecar.app import open_engine
    from lore_sidecar.engine.indexing.loads import exit_leaving_loads, leave_loads_at_stop
    from lore_sidecar.engine_host import Host
    from lore_sidecar.mcp_face.tools import build

    leave_loads_at_stop()  # this process ends through exit_leaving_loads, below
    host = Host(settings, [workspace], open_engine, warnings)
    try:
        anyio.run(serve, build(host, harness), wires, early)
    finally:
        host.close()
    return exit_leaving_loads(0)


def _load_heavy() -> None:
    import lore_sidecar.app  # noqa: F401
    import lore_sidecar.engine_host  # noqa: F401
    import lore_sidecar.mcp_face.tools  # noqa: F401


async def serve(server, wires, early) -> None:
    """Until the client closes stdin. Only MCP frames reach stdout (see mcp_face/stdio.py)."""
    from mcp.server.stdio import stdio_server

    from lore_sidecar.mcp_face.stdio import claimed_stdio

    already = b"".join(early.lines) + early.rest  # read by the handshake: the SDK reads it again
    async with claimed_stdio(wires, already_read=already, incoming=early.incoming, outgoing=early.outgoing) as (lines, sink), \
            stdio_server(stdin=lines, stdout=sink) as (read, write):
        # The SDK's MCPServer.run("stdio") does this over its threaded stdio; the session
        # loop is the same.
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())
