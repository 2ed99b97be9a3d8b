"""What the MCP face offers besides tools, for clients that show them: knowledge nodes as
resources (`project://<project>/<category>/<slug>`, `preferences://user/<slug>`) and a
"remember this decision" prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from lore_sidecar.mcp_face import render

Call = Callable[..., Awaitable[dict[str, Any]]]


def register(server: MCPServer, call: Call) -> None:
    async def node(uri: str) -> str:
        try:
            return render.node(await call("lore/getNode", {"uri": uri}))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None

    @server.resource("project://{project}/{category}/{slug}", name="project knowledge", mime_type="text/plain",
                     description="A project's knowledge node (decision, pattern, architecture, gotcha, ...)")
    async def project_node(project: str, category: str, slug: str) -> str:
        return await node(f"project://{project}/{category}/{slug}")

    @server.resource("preferences://user/{slug}", name="user preference", mime_type="text/plain",
                     description="One of the user's preferences, shared by every project")
    async def preference_node(slug: str) -> str:
        return await node(f"preferences://user/{slug}")

    @server.prompt(name="remember_decision", title="Remember this decision",
                   description="Save a decision to long-term memory with lore_retain")
    def remember_decision(decision: str, why: str = "") -> str:
        reason = f" Why: {why.strip()}" if why.strip() else ""
        return ("Save this decision to long-term memory with the lore_retain tool (category \"decision\"; a short "
                f"title; the files it concerns as sources when you know them): {decision.strip()}{reason}")
