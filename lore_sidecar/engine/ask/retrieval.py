"""The answer without a model (`mode: "retrieval"`): the best hybrid-recall hits over the
workspace and memory, with paths, line ranges and the file hashes they were read at, said
plainly for what it is. Also the floor under a model answer that produced nothing."""

from __future__ import annotations

from typing import Any

SOURCES = ["files", "knowledge", "facts", "distillations", "messages"]
LEADS = 8
NOTHING = "Nothing in the code or in memory matches it."
NO_MODEL = ("No model answered this (set ANTHROPIC_API_KEY, or askProvider \"openai\" with a key, for "
            "written answers); the places in the code and in memory that match it best:")


def leads(engine: Any, question: str, *, project: str | None, harness: str | None,
          intro: str = NO_MODEL) -> tuple[str, list[dict[str, Any]]]:
    """(answer text, sources) from recall."""
    result = engine.recall(question, project=project, sources=SOURCES, limit=LEADS, runtime=harness)
    sources, lines = [], []
    for h in result.hits:
        if h.source == "files" and h.path:
            meta = engine.get_node(h.uri).metadata
            path = meta.get("path") or h.path
            span = f"{h.range[0]}-{h.range[1]}" if h.range else None
            sources.append({"path": path, "lines": span, "sha256": meta.get("sha256")})
            where = f"{path}:{span}" if span else path
        else:
            where = h.uri
        lines.append(f"- {where} — {' '.join(h.snippet.split())[:200]}")
    if not lines:
        return NOTHING, []
    return "\n".join([intro, *lines]), sources


def still_indexing(answer: str, files: int) -> str:
    """A retrieval answer given before the workspace's first scan finished: what is there now,
    and that more is coming (never "nothing matches", which would be false)."""
    head = f"The workspace is still being indexed ({files:,} files so far)"
    if answer == NOTHING:
        return f"{head}: nothing indexed so far matches it. Ask again in a moment."
    return f"{head}; this answer is from what is indexed now.\n{answer}"


def trailer(*, latency_ms: float, model: str | None = None) -> dict[str, Any]:
    return {"model": model, "latencyMs": latency_ms, "tokensIn": 0, "tokensOut": 0, "cacheRead": 0, "cacheWrite": 0,
            "toolCalls": 0, "toolMs": 0.0, "filesRead": 0, "usd": 0.0, "contextFill": 0.0}
