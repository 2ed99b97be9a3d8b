"""The official MCP client (the `mcp` SDK) driving `lore-sidecar mcp` over stdio."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation


@asynccontextmanager
async def mcp_session(store: Path, workspace: Path, *args: str, client_name: str = "lore-tests",
                      env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lore_sidecar", "mcp", "--store-dir", str(store), *args],
        cwd=str(workspace),
        # The SDK passes only a few variables on; PYTHONPATH too, so a scratch tree (tools/
        # mutations.py) runs its own code.
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ} | (env or {}))
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, client_info=Implementation(name=client_name, version="1")) as session:
                await session.initialize()
                yield session


async def text(session: ClientSession, tool: str, args: dict | None = None) -> str:
    """A successful call's text (fails the test on a tool error)."""
    r = await session.call_tool(tool, args or {})
    body = "\n".join(c.text for c in r.content if getattr(c, "text", None) is not None)
    assert not r.is_error, f"{tool} failed: {body}"
    return body


async def refusal(session: ClientSession, tool: str, args: dict) -> str:
    """A refused call's text (fails the test if the call succeeded)."""
    r = await session.call_tool(tool, args)
    body = "\n".join(c.text for c in r.content if getattr(c, "text", None) is not None)
    assert r.is_error, f"{tool} was not refused: {body}"
    return body
