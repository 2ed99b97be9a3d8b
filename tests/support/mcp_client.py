"""The official MCP client (the `mcp` SDK) driving `lore-sidecar mcp` over stdio."""

from __future__ import annotations

from mcp import ClientSession

from bench.mcp_session import mcp_session

__all__ = ["mcp_session", "refusal", "text"]


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
