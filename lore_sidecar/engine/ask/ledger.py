"""The knowledge ledger of a workspace: what codebase questions have learnt, one fact per
line, each with the files it came from and their sha256 when it was learnt — the same
provenance a knowledge node's `sources` carry, so a fact can be promoted to a node.

A fact whose source changes is *stale*: it stays (the next answer may re-validate it) but is
shown as stale until its files hash as they did, or the model records it again from the
files as they are now. Pure functions over immutable facts; the window owns the tuple.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lore_sidecar.engine.lifecycle.blocks import inert

ORIGINS = ("model", "observation", "qa", "passive", "preload")
FACT_CHARS = 600


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    sources: Mapping[str, str] = field(default_factory=dict)  # path (relative) -> sha256 when learnt
    origin: str = "model"
    learnt_at: str = ""
    stale: bool = False


def fact_id(text: str) -> str:
    return "F" + hashlib.sha1(" ".join(text.lower().split()).encode()).hexdigest()[:7]


def make(text: str, sources: Mapping[str, str], *, origin: str, at: str) -> Fact:
    flat = " ".join(text.split())[:FACT_CHARS]
    return Fact(id=fact_id(flat), text=flat, sources=dict(sorted(sources.items())), origin=origin, learnt_at=at)


def add(facts: tuple[Fact, ...], new: Iterable[Fact]) -> tuple[tuple[Fact, ...], list[str]]:
    """The ledger with `new` merged: a fact already there (same text) takes the new sources
    and is current again; others are appended in order. Returns it and the ids added."""
    out = list(facts)
    where = {f.id: i for i, f in enumerate(out)}
    added = []
    for f in new:
        if f.id in where:
            old = out[where[f.id]]
            out[where[f.id]] = replace(old, sources={**old.sources, **f.sources}, stale=False)
        else:
            where[f.id] = len(out)
            out.append(f)
            added.append(f.id)
    return tuple(out), added


def revalidate(facts: tuple[Fact, ...], hash_of: Callable[[str], str | None]
               ) -> tuple[tuple[Fact, ...], list[Fact], list[Fact]]:
    """Re-hash every cited file: (the ledger, the facts that went stale, the facts current
    again). A source that vanished counts as changed."""
    out, went, back = [], [], []
    cache: dict[str, str | None] = {}
    for f in facts:
        changed = False
        for path, sha in f.sources.items():
            if path not in cache:
                cache[path] = hash_of(path)
            changed |= cache[path] != sha
        if changed and not f.stale:
            f = replace(f, stale=True)
            went.append(f)
        elif not changed and f.stale and f.sources:
            f = replace(f, stale=False)
            back.append(f)
        out.append(f)
    return tuple(out), went, back


def render(facts: Iterable[Fact]) -> str:
    """One line per fact: `F1a2b3c4 [src/x.py@1a2b3c4d] text`, `(stale)` when it is."""
    lines = []
    for f in facts:
        cites = ", ".join(f"{p}@{sha[:8]}" for p, sha in f.sources.items())
        lines.append(f"{f.id}{' (stale)' if f.stale else ''} [{inert(cites)}] {inert(f.text)}")
    return "\n".join(lines)


def to_json(f: Fact) -> dict[str, Any]:
    return {"id": f.id, "text": f.text, "sources": dict(f.sources), "origin": f.origin, "learntAt": f.learnt_at,
            "stale": f.stale}


def from_json(d: Mapping[str, Any]) -> Fact:
    return Fact(id=str(d["id"]), text=str(d["text"]), sources={str(k): str(v) for k, v in (d.get("sources") or {}).items()},
                origin=str(d.get("origin") or "model"), learnt_at=str(d.get("learntAt") or ""), stale=bool(d.get("stale")))
