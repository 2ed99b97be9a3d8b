"""What a request may ask of memory: node writes (through the one write path, secrets
redacted and source paths made relative first), node reads, distillation now, the
`.lore.md` exchange, and usage bookkeeping (best effort)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore_sidecar.engine.memory.nodes import redacted_node_args, relative_sources
from lore_sidecar.engine.memory.service import Memory
from lore_sidecar.errors import LoreError
from lore_sidecar.model import NodeContent

NODE_METHODS = ("createNode", "updateNode", "moveNode", "deleteNode", "retain", "forget")


class MemoryRequests:
    def __init__(self, instance: Any, store: Memory, distiller: Any = None):
        self.i = instance  # the engine: records, projects, writes, fresh(), wrote()
        self.store = store  # nodes, distillations, entities
        self.distiller = distiller  # built on every instance; runs on the writer

    def node_op(self, method: str, *, project: str | None = None, runtime: str | None = None, **args: Any) -> dict[str, Any]:
        """One of NODE_METHODS."""
        root = self.i.projects.root(project)
        runtime = runtime or "client"
        return self.i.writes.submit(
            check=lambda: self.store.check(method, root, relative_sources(root, redacted_node_args(args))),
            apply=lambda a: self.store.apply(method, root, a, runtime),
            op=lambda a: {"kind": "nodeOp", "method": method, "project": root, "runtime": runtime, "args": a},
            unapplied=lambda a: {"uri": a.get("new_uri") or a.get("uri"), "version": None})

    def get(self, uri: str) -> NodeContent:
        return self.store.get(uri)

    def list_domains(self, *, project: str | None = None, scope: str = "project") -> dict[str, Any]:
        self.i.fresh()
        return self.store.list_domains(self.i.projects.ids(project, scope))

    def list_nodes(self, *, project: str | None = None, scope: str = "project", domain: str | None = None,
                   limit: int = 10_000, offset: int = 0) -> dict[str, Any]:
        """Live nodes (best priority first), optionally only those whose URI starts with `domain`."""
        self.i.fresh()
        found = [n for n in self.store.list_nodes(self.i.projects.ids(project, scope))
                 if not domain or n["uri"].startswith(domain)]
        page = found[offset: offset + limit]
        more = offset + len(page) < len(found)
        return {"nodes": page, "total": len(found), "truncated": more,
                **({"nextOffset": offset + len(page)} if more else {})}

    def node_history(self, uri: str) -> dict[str, Any]:
        self.i.fresh()
        return self.store.knowledge.history(uri)

    def distill(self, *, session_id: str | None = None) -> dict[str, Any]:
        """Run the distillation pipeline now (the writer's; a follower is told who can)."""
        self.i.require_writer()
        if self.distiller is None or self.distiller.mode == "off":
            raise LoreError("distillerOff", "distillation is off on this instance (distiller = off)")
        created = self.distiller.tick(force=True, session_id=session_id)
        self.i.wrote()
        return {"created": created, "mode": self.distiller.mode, "deferred": self.distiller.deferred}

    def export_knowledge(self, *, project: str | None = None, path: str | None = None) -> dict[str, Any]:
        self.i.fresh()
        root = self.i.projects.root(project)
        found = self.i.records.find_project(root)
        return self.store.export(root, found.id if found else None, Path(path) if path else None, jail=self.i.projects.jail)

    def import_knowledge(self, *, project: str | None = None) -> dict[str, Any]:
        self.i.require_writer()
        root = self.i.projects.root(project)
        result = self.store.import_if_changed(root, jail=self.i.projects.jail)
        self.i.wrote()
        return result or {"created": 0, "updated": 0, "unchanged": 0, "problems": [], "skipped": "unchanged since the last import"}

    def count_use(self, query_id: str, uri: str, session_id: str | None, runtime: str | None) -> None:
        """A recalled lead was opened. Best effort: never fails the read that reports it."""
        self._usage("countUse", {"query_id": query_id, "uri": uri, "session_id": session_id}, runtime)

    def log_recall(self, query_id: str, session_id: str | None, harness: str | None, leads: int,
                   uris: list[str] | None = None) -> None:
        """Leads shown to a runtime (the other half of usage), and which memories they were
        (decay). Best effort, like count_use."""
        self._usage("logRecall", {"query_id": query_id, "session_id": session_id, "leads": leads, "uris": uris or []},
                    harness)

    def _usage(self, method: str, args: dict[str, Any], runtime: str | None) -> None:
        runtime = runtime or "client"
        self.i.writes.best_effort(lambda: self.store.apply(method, "", args, runtime),
                                  {"kind": "nodeOp", "method": method, "project": "", "runtime": runtime, "args": args})
