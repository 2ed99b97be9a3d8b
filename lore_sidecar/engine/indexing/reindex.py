"""Rebuilding what is derived: the indexes are caches of the record (DESIGN §2.1)."""

from __future__ import annotations

import time
from typing import Any

from lore_sidecar.engine.workspace.index import Progress
from lore_sidecar.errors import LoreError


def rebuild(engine: Any, scope: str = "all", progress: Progress | None = None) -> dict[str, Any]:
    """`lore/reindex`: replay the facts from the journal and notes, rebuild the indexes from
    the record, rescan the workspace — as the scope asks — and wait until the index is level."""
    t0 = time.perf_counter()
    indexer = engine.view.indexer
    if indexer is None:
        raise LoreError("indexNotReady", "this instance became the writer moments ago; retry", retryable=True)
    replay = None
    if scope in ("all", "facts"):
        if progress:
            progress("replaying facts from the journal and notes", 0)
        replay = engine.facts.store.replay()
    if scope == "all":
        if progress:
            progress("rebuilding indexes from the record", 0)
        indexer.request_rebuild()
    if scope in ("all", "workspace"):
        engine.index.scan(progress, force=scope == "workspace")
    indexer.wait_dense(engine.records.outbox_head(), timeout=3600)
    counts = engine.records.counts(None)
    out = {"generation": indexer.generation, "files": counts["files"], "chunks": counts["chunks"],
           "facts": counts["facts"], "tookMs": round((time.perf_counter() - t0) * 1000, 1)}
    if replay is not None:
        out["replay"] = replay
    return out
