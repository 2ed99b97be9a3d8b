"""`lore/status`: what this instance is and what the store holds, in one answer."""

from __future__ import annotations

from typing import Any

from lore_sidecar import PROTOCOL_VERSION, __version__
from lore_sidecar.engine.indexing.dense import COUNTED_AS

COUNTED = ("messages", "distillations", "knowledge", "entities", "facts", "files", "chunks")


def dense_behind(view: Any) -> bool:
    """Whether anything is still to be embedded (cheap: asked on every recall)."""
    if view.indexer is not None:
        return view.indexer.applied_seq > view.indexer.dense_seq or view.indexer.dense_backlog > 0
    if view.vectors is None:
        return False
    return view.text.saved_seq > view.vectors.saved_seq or bool(view.vectors.stale)


def dense_lag(view: Any, records: Any) -> int:
    """`vectorLag`: the outbox positions the vector index trails the text index, plus the
    records of kinds being embedded again from the record: 0 only when level. A reader sees
    a kind being embedded again only as unfinished in the writer's last snapshot, whose
    vectors of it it leaves out: every record of such a kind counts (trigger: a reader
    counted the kinds, 1 each, whatever their size)."""
    if view.indexer is not None:
        return max(0, view.indexer.applied_seq - view.indexer.dense_seq) + view.indexer.dense_backlog
    if view.vectors is None:
        return 0
    stale = set(view.vectors.stale)
    left = 0
    if stale:
        counts = records.counts(None)
        left = sum(counts.get(COUNTED_AS.get(kind, kind), 1) for kind in stale)
    return max(0, view.text.saved_seq - view.vectors.saved_seq) + left


def status_of(engine: Any, root: str) -> dict[str, Any]:
    records, view, role = engine.records, engine.view, engine.role
    found = records.find_project(root)
    counts = records.counts(found.id) if found else dict.fromkeys(COUNTED, 0)
    indexer = view.indexer
    generation = indexer.generation if indexer else int(records.meta("generation", "0") or 0)
    applied = indexer.applied_seq if indexer else view.text.saved_seq
    embedder = engine.embedder
    return {
        "version": __version__,
        "protocolVersion": PROTOCOL_VERSION,
        "role": "writer" if role.writer else "follower",
        "writerPid": role.writer_pid,
        "epoch": role.epoch,
        "storeDir": str(engine.settings.store_dir),
        "project": {"id": found.id if found else None, "root": root},
        "generation": generation,
        "counts": {k: counts[k] for k in COUNTED},
        "embedder": _embedder(embedder),
        "distiller": engine.distiller.status() if engine.distiller is not None else {"mode": "off", "model": None},
        "shared": engine.shared.status() if engine.shared is not None else None,
        "ask": {"mode": "model" if engine.ask.model is not None else "retrieval",
                "model": getattr(engine.ask.model, "model", None), "reason": engine.ask_reason},
        "usage": records.nodes.usage(),
        "savings": engine.context.savings.status(),
        # -1: behind (age not tracked), or the words being rebuilt from the record (`lore/reindex`)
        "indexLagMs": 0 if applied >= records.outbox_head() and not (indexer and indexer.rebuilding) else -1,
        "indexError": (indexer.error or (indexer.dense.error if indexer.dense else None)) if indexer else None,
        "vectorLag": dense_lag(view, records),
        "indexEpoch": view.index_epoch,
        "election": engine.election.info() if engine.election is not None else {},
        "ignoredSettings": [{"setting": k, "source": src, "reason": why} for k, src, why in engine.settings.ignored],
    }


def _embedder(models: Any) -> dict[str, Any]:
    """The default model (conversation, memory, facts), the workspace files' model, and why
    one fell back, if it did."""
    if models is None:
        return {"name": "none", "dim": 0, "files": {"name": "none", "dim": 0}, "problem": None}
    files = models.for_kind("files")
    return {"name": models.name, "dim": models.dim,
            "files": {"name": files.name if files else "none", "dim": files.dim if files else 0},
            "problem": models.problem}
