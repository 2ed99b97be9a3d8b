"""`lore/*` handlers for knowledge nodes, distillation and the .lore.md exchange."""

from __future__ import annotations

from typing import Any

from lore_sidecar.rpc.calls import Calls
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure

NODE_FIELDS = ("content", "category", "priority", "disclosure", "scope", "sources", "expires_at")


def handlers(c: Calls) -> dict[str, Any]:
    def node_write(method: str, params_type: type, fields: tuple[str, ...], changes: bool = False):
        async def handler(params: Any) -> dict[str, Any]:
            p = structure(params, params_type)
            args: dict[str, Any] = {f: getattr(p, f) for f in fields}
            if args.get("sources") is not None:
                args["sources"] = [{"path": s.path, "sha256": s.sha256} for s in args["sources"]]
            if changes:  # an update carries only the fields the client sent
                args = {"uri": p.uri, "expected_version": p.expected_version,
                        "changes": {k: v for k, v in args.items() if v is not None}}
            return await c.write("memory.node_op", method, project=getattr(p, "project", None), runtime=p.harness, **args)

        handler.__name__ = method
        return handler

    async def list_domains(params: Any) -> dict[str, Any]:
        p = structure(params, t.ListDomainsParams)
        return await c.read("memory.list_domains", project=p.project, scope=p.scope)

    async def list_nodes(params: Any) -> dict[str, Any]:
        p = structure(params, t.ListNodesParams)
        return await c.read("memory.list_nodes", project=p.project, scope=p.scope, domain=p.domain, limit=p.limit,
                          offset=p.offset)

    async def node_history(params: Any) -> dict[str, Any]:
        p = structure(params, t.NodeHistoryParams)
        return await c.read("memory.node_history", p.uri)

    async def distill(params: Any) -> dict[str, Any]:
        p = structure(params, t.DistillParams)
        return await c.write("memory.distill", session_id=p.session_id)

    async def export_knowledge(params: Any) -> dict[str, Any]:
        p = structure(params, t.ExportKnowledgeParams)
        return await c.read("memory.export_knowledge", project=p.project, path=p.path)

    async def import_knowledge(params: Any) -> dict[str, Any]:
        p = structure(params, t.ImportKnowledgeParams)
        return await c.write("memory.import_knowledge", project=p.project)

    return {
        "lore/createNode": node_write("createNode", t.CreateNodeParams, ("uri", *NODE_FIELDS)),
        "lore/updateNode": node_write("updateNode", t.UpdateNodeParams, (*NODE_FIELDS, "suppressed"), changes=True),
        "lore/moveNode": node_write("moveNode", t.MoveNodeParams, ("uri", "new_uri")),
        "lore/deleteNode": node_write("deleteNode", t.DeleteNodeParams, ("uri",)),
        "lore/retain": node_write("retain", t.RetainParams, ("uri", "title", *NODE_FIELDS)),
        "lore/forget": node_write("forget", t.ForgetParams, ("uri", "reason")),
        "lore/listDomains": list_domains,
        "lore/listNodes": list_nodes,
        "lore/nodeHistory": node_history,
        "lore/distill": distill,
        "lore/exportKnowledge": export_knowledge,
        "lore/importKnowledge": import_knowledge,
    }
