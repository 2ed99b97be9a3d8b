"""`lore/ask`: a question about the codebase.

This first step answers from retrieval: the best hybrid-recall hits over the workspace and
memory, with paths, line ranges and the file hashes they were read at, and says plainly that
no model wrote the answer (`mode: "retrieval"`). The model's loop over the read-only tools
(engine/ask/tools.py) and the knowledge ledger come next (issue 17).
"""

from __future__ import annotations

import time
from typing import Any

from lore_sidecar.errors import LoreError

SOURCES = ["files", "knowledge", "facts", "distillations", "messages"]
LEADS = 8


class AskRequests:
    def __init__(self, instance: Any):
        self.i = instance  # the engine: recall, get_node, projects
        self.answered: dict[str, int] = {}

    def ask(self, *, question: str, project: str | None = None, deadline_ms: int | None = None,
            harness: str | None = None) -> dict[str, Any]:
        if not question.strip():
            raise LoreError("invalidQuestion", "ask a question (it was empty)")
        t0 = time.perf_counter()
        root = self.i.projects.root(project)
        result = self.i.recall(question, project=project, sources=SOURCES, limit=LEADS, runtime=harness)
        sources, lines = [], []
        for h in result.hits:
            if h.source == "files" and h.path:
                meta = self.i.get_node(h.uri).metadata
                sources.append({"path": meta.get("path") or h.path, "lines": f"{h.range[0]}-{h.range[1]}" if h.range else None,
                                "sha256": meta.get("sha256")})
                where = f"{meta.get('path') or h.path}:{h.range[0]}-{h.range[1]}" if h.range else h.path
            else:
                where = h.uri
            lines.append(f"- {where} — {' '.join(h.snippet.split())[:200]}")
        self.answered[root] = self.answered.get(root, 0) + 1
        intro = ("No model answered this (set ANTHROPIC_API_KEY for written answers); the places in the "
                 "code and in memory that match it best:") if lines else "Nothing in the code or in memory matches it."
        return {
            "answer": "\n".join([intro, *lines]),
            "mode": "retrieval",
            "sources": sources,
            "ledgerFacts": [],
            "trailer": {"model": None, "latencyMs": round((time.perf_counter() - t0) * 1000, 1), "tokensIn": 0,
                        "tokensOut": 0, "cacheRead": 0, "cacheWrite": 0, "toolCalls": 0, "filesRead": 0, "usd": 0.0,
                        "contextFill": 0.0},
        }

    def stats(self, *, project: str | None = None) -> dict[str, Any]:
        root = self.i.projects.root(project)
        return {"project": root, "questionsAnswered": self.answered.get(root, 0), "mode": "retrieval",
                "ledgerFacts": 0, "staleFacts": 0, "windowFill": 0.0, "usd": 0.0, "cacheHitRatio": None,
                "lastCompaction": None}
