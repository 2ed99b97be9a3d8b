"""Domain results as wire dictionaries (camelCase, every field present): used by the
protocol handlers and by the CLI's `--json`, so both print the same shapes."""

from __future__ import annotations

from typing import Any

from lore_sidecar.model import Hit, NodeContent, RecallResult


def hit_to_wire(h: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {
        "uri": h.uri,
        "source": h.source,
        "score": h.score,
        "snippet": h.snippet,
        "cues": h.cues,
        "title": h.title,
        "sessionId": h.session_id,
        "path": h.path,
        "range": {"startLine": h.range[0], "endLine": h.range[1]} if h.range else None,
        "createdAt": h.created_at,
    }
    if h.source == "knowledge":
        out.update(category=h.category, priority=h.priority, stale=h.stale)
    return out


def recall_to_wire(r: RecallResult) -> dict[str, Any]:
    return {
        "queryId": r.query_id,
        "hits": [hit_to_wire(h) for h in r.hits],
        "total": r.total,
        "truncated": r.truncated,
        "nextOffset": r.next_offset,
        "tookMs": r.took_ms,
        "densePartial": r.dense_partial,
        "timeWindows": [{"from": a, "until": b} for a, b in r.time_windows],
        "indexing": r.indexing,
        "writesPending": r.writes_pending,
    }


def node_to_wire(n: NodeContent) -> dict[str, Any]:
    return {"uri": n.uri, "source": n.source, "content": n.content, "metadata": n.metadata}
