"""`lore/*` handlers for reads across every tier, the store's status and rebuilding the indexes."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure
from lore_sidecar.wire.results import node_to_wire, recall_to_wire


def handlers(c: Calls) -> dict[str, Any]:
    async def status(params: Any) -> dict[str, Any]:
        p = structure(params, t.StatusParams)
        result = await c.read("status", p.project)
        result["settingsWarnings"] = list(c.server.settings_warnings)
        return result

    async def recall(params: Any) -> dict[str, Any]:
        p = structure(params, t.RecallParams)
        result = await c.read("recall", p.query, project=p.project, scope=p.scope, sources=p.sources, limit=p.limit,
                            offset=p.offset, as_of=p.as_of, now=p.now, lexical_only=p.lexical_only, session_id=p.session_id,
                            runtime=p.harness)
        return recall_to_wire(result)

    async def get_node(params: Any) -> dict[str, Any]:
        p = structure(params, t.GetNodeParams)
        return node_to_wire(await c.read("get_node", p.uri, query_id=p.query_id, session_id=p.session_id, runtime=p.harness))

    async def reindex(params: Any) -> dict[str, Any]:
        p = structure(params, t.ReindexParams)

        async def work() -> dict[str, Any]:
            engine = await c.server.engine()
            return await c.server.with_progress("lore: reindexing", lambda report: engine.index.rebuild(p.scope, report))

        return await c.order.write(work)

    return {
        "lore/status": status,
        "lore/recall": recall,
        "lore/getNode": get_node,
        "lore/reindex": reindex,
    }
