"""`lore/*` handlers for codebase questions."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def handlers(c: Calls) -> dict[str, Any]:
    async def ask(params: Any) -> dict[str, Any]:
        p = structure(params, t.AskParams)
        return await c.slow("ask.ask", question=p.question, project=p.project, deadline_ms=p.deadline_ms,
                            harness=p.harness)

    async def ask_stats(params: Any) -> dict[str, Any]:
        p = structure(params, t.AskStatsParams)
        return await c.read("ask.stats", project=p.project)

    return {"lore/ask": ask, "lore/askStats": ask_stats}
