"""What the command line prints for people (the CLI's verbs and the demo share it)."""

from __future__ import annotations

from typing import Any


def print_hits(hits: list[Any], total: int, took_ms: float) -> None:
    if not hits:
        print("no hits")
        return
    for i, h in enumerate(hits, 1):
        d = h if isinstance(h, dict) else {"score": h.score, "uri": h.uri, "cues": h.cues, "snippet": h.snippet}
        cues = " · ".join(d["cues"] or [])
        print(f"{i:2d}. {d['score']:.4f}  {d['uri']}")
        if cues:
            print(f"     cues: {cues}")
        print(f"     {d['snippet'][:160]}")
    print(f"({len(hits)} of {total} hits, {took_ms:.1f} ms)")
