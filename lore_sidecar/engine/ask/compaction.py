"""Compaction of a workspace's window: neutral, batched, with hysteresis.

Trigger: the window's fill crosses `HIGH` (0.85) and the cooldown has passed (or the fill is
past `MUST`, when waiting is no longer an option). It then brings the fill to at most `LOW`
(0.60) in one step, so the next compaction is far away and the frozen block stays put for
many questions — each compaction costs one cache write of the whole prefix.

What it keeps, never shaped by the question being asked (a compaction serves every later
question, not this one):
- every Q&A since the last compaction becomes a ledger fact (question, the gist of the answer,
  the files it read with their hashes): the reasoning is summarised, never dropped;
- every file read since becomes an observation fact (what the file defines, by line), so an
  evicted file context still leaves its outline;
- file contexts stay, most recently used first, while they fit under `LOW`; the rest go.
Only if the ledger alone would not fit are its oldest observations folded away first, then
the oldest Q&A gists shortened.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lore_sidecar.engine.ask import ledger as lg
from lore_sidecar.engine.ask.window import FIXED_TOKENS, FileCtx, Window, fill, frozen_text, tokens

HIGH = 0.85
LOW = 0.60
MUST = 0.95
COOLDOWN_QUESTIONS = 2
GIST_CHARS = 280


@dataclass(frozen=True)
class Report:
    fill_before: float
    fill_after: float
    facts_added: int
    files_kept: int
    files_evicted: int
    qa_summarised: int


def due(fill: float, questions: int, cooldown_until: int) -> bool:
    return fill >= MUST or (fill >= HIGH and questions >= cooldown_until)


def compact(w: Window, *, window_tokens: int, at: str, fill_before: float) -> Report:
    """Compacts `w` in place (the caller holds its lock) and returns what it did."""
    new: list[lg.Fact] = []
    for question, answer, sources in w.qa:
        gist = " ".join(answer.split())[:GIST_CHARS]
        new.append(lg.make(f"Q: {' '.join(question.split())[:200]} — A: {gist}", sources, origin="qa", at=at))
    for path, (sha, summary) in sorted(w.observed.items()):
        new.append(lg.make(summary, {path: sha}, origin="observation", at=at))
    facts, added = lg.add(w.ledger, new)
    budget = int(LOW * window_tokens) - FIXED_TOKENS - tokens(frozen_text(w.root, w.tree, (), {}))
    facts = _fit(facts, budget)
    room = budget - tokens(lg.render(facts))
    kept: dict[str, FileCtx] = {}
    for f in sorted(w.files.values(), key=lambda f: -f.used):
        cost = tokens(f.text) + 40  # the file's tag and manifest line
        if cost <= room:
            kept[f.path] = f
            room -= cost
    evicted = len(w.files) - len(kept)
    w.ledger, w.files = facts, kept
    w.history, w.qa, w.observed = [], [], {}
    w.refreeze()
    w.version += 1
    w.compactions += 1
    w.cooldown_until = w.questions + COOLDOWN_QUESTIONS
    after = fill(w, window_tokens)
    report = Report(fill_before=fill_before, fill_after=after, facts_added=len(added), files_kept=len(kept),
                    files_evicted=evicted, qa_summarised=sum(1 for f in new if f.origin == "qa"))
    w.last_compaction = {"at": at, **report.__dict__}
    return report


def _fit(facts: tuple[lg.Fact, ...], budget: int) -> tuple[lg.Fact, ...]:
    """The ledger within `budget` tokens: oldest observations go first, then the oldest Q&A
    gists are shortened to their question; what the model itself recorded is kept."""
    out = list(facts)
    for origin in ("passive", "observation", "preload"):
        while tokens(lg.render(out)) > budget:
            i = next((i for i, f in enumerate(out) if f.origin == origin), None)
            if i is None:
                break
            out.pop(i)
    for i, f in enumerate(out):
        if tokens(lg.render(out)) <= budget:
            break
        if f.origin == "qa" and " — A: " in f.text:
            out[i] = replace(f, text=f.text.split(" — A: ")[0])
    return tuple(out)
