"""Fusion of the lexical and vector legs (reciprocal rank, backfill, or normalised scores)
plus a small recency bonus. Pure."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from lore_sidecar.model import Candidate


def fuse(
    lexical: Sequence[tuple[str, int, float]],
    vector: Sequence[tuple[str, int, float]],
    *,
    lexical_weight: float,
    vector_weight: float,
    k: int,
    mode: str = "rrf",
) -> list[Candidate]:
    """Fuse the lexical and vector legs, each ranked best-first.

    `rrf`: weighted reciprocal rank fusion. Equal weights let a weak leg drag good lexical
    hits down, so the legs are weighted (and a leg may be switched off with 0).
    `backfill`: lexical hits keep their BM25 order; vector-only hits follow them. The vector
    leg then rescues queries that share no words with what they look for, and never reorders
    what BM25 found (with a static embedder it only makes that order worse: measured)."""
    if mode == "backfill":
        floor = lexical_weight / (k + len(lexical) + 1)
        seen = {(kind, key) for kind, key, _ in lexical}
        vector_only = [v for v in vector if (v[0], v[1]) not in seen]
        out = fuse(lexical, [], lexical_weight=lexical_weight, vector_weight=0, k=k)
        lexical_ids = {(c.kind, c.key): c for c in out}
        for rank, (kind, key, score) in enumerate(vector):
            c = lexical_ids.get((kind, key))
            if c is not None:
                c.vec_rank, c.vec_score = rank, score
        for rank, (kind, key, score) in enumerate(vector_only):
            c = Candidate(kind, key)
            c.vec_rank, c.vec_score = rank, score
            c.fused = floor * vector_weight / (1 + rank) if vector_weight > 0 else 0.0
            if c.fused > 0:
                out.append(c)
        return out
    by_id: dict[tuple[str, int], Candidate] = {}
    for rank, (kind, key, score) in enumerate(lexical):
        c = by_id.setdefault((kind, key), Candidate(kind, key))
        c.lex_rank, c.lex_score = rank, score
        c.fused += lexical_weight / (k + rank + 1)
    for rank, (kind, key, score) in enumerate(vector):
        c = by_id.setdefault((kind, key), Candidate(kind, key))
        c.vec_rank, c.vec_score = rank, score
        c.fused += vector_weight / (k + rank + 1)
    return sorted(by_id.values(), key=lambda c: (-c.fused, c.kind, c.key))


def combine(
    lexical: Sequence[tuple[str, int, float]],
    vector: Sequence[tuple[str, int, float]],
    *,
    lexical_weight: float,
    vector_weight: float,
    k: int,
) -> list[Candidate]:
    """Normalised-score fusion: each leg's scores min-max scaled to [0, 1] over its own
    candidates (a hit missing from a leg scores 0 there), then weighted and summed.
    Unlike rank fusion, how far ahead a hit is counts: a vector hit far more similar than
    the rest can enter the top, a near-tie of the dense leg hardly moves BM25's order.
    Each leg's best hit adds what a first rank adds under reciprocal rank fusion, so groups
    fused differently (and with other weights) still merge on one scale."""
    by_id: dict[tuple[str, int], Candidate] = {}
    for leg, weight in ((lexical, lexical_weight), (vector, vector_weight)):
        scaled = min_max([score for _, _, score in leg])
        for rank, ((kind, key, score), z) in enumerate(zip(leg, scaled, strict=True)):
            c = by_id.setdefault((kind, key), Candidate(kind, key))
            if leg is lexical:
                c.lex_rank, c.lex_score = rank, score
            else:
                c.vec_rank, c.vec_score = rank, score
            c.fused += weight / (k + 1) * z
    return sorted(by_id.values(), key=lambda c: (-c.fused, c.kind, c.key))


def min_max(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)  # one hit, or all tied: each is the leg's best
    return [(x - lo) / (hi - lo) for x in scores]


def fuse_by_kind(
    lexical: Sequence[tuple[str, int, float]],
    vector: Sequence[tuple[str, int, float]],
    *,
    lexical_weight: float,
    vector_weight: float,
    prose_vector_weight: float,
    code_vector_weight: float,
    is_code: Callable[[int], bool],
    k: int,
) -> list[Candidate]:
    """`auto` fusion, by source kind. Workspace files by normalised scores, where a
    confident vector hit may enter the top — code and prose with their own vector weight
    (measured: the dense leg lifts document search, and code search far more). Every
    conversation tier by backfill, where reordering BM25 costs recall (measured on
    conversation memory). Each group is fused on its own; the groups merge by score, on the
    reciprocal-rank scale in all of them."""
    def group(hits: Sequence[tuple[str, int, float]], name: str) -> list[tuple[str, int, float]]:
        return [h for h in hits if _group(h, is_code) == name]

    out: list[Candidate] = []
    for name, weight in (("code", code_vector_weight), ("prose", prose_vector_weight)):
        out += combine(group(lexical, name), group(vector, name), lexical_weight=lexical_weight,
                       vector_weight=weight, k=k)
    out += fuse(group(lexical, "conversation"), group(vector, "conversation"), lexical_weight=lexical_weight,
                vector_weight=vector_weight, k=k, mode="backfill")
    return sorted(out, key=lambda c: (-c.fused, c.kind, c.key))


def _group(hit: tuple[str, int, float], is_code: Callable[[int], bool]) -> str:
    if hit[0] != "files":
        return "conversation"
    return "code" if is_code(hit[1]) else "prose"


def recency_bonus(age_days: float, *, weight: float, half_life_days: float, k: int) -> float:
    """A bonus on the RRF scale (at most `weight` times a first-rank contribution) that
    halves every `half_life_days`."""
    if weight <= 0 or age_days != age_days:  # NaN guard
        return 0.0
    age_days = max(0.0, age_days)
    return weight / (k + 1) * math.pow(0.5, age_days / half_life_days)


def session_lift(cands: Sequence[Candidate], rows: Mapping[int, Mapping], weight: float) -> dict[int, float]:
    """What each message candidate gains from the rest of its session: `weight` times the
    gap between its fused score and its session's best (`rows[key]["session_id"]`), so its
    score moves that share of the way towards the session's best.

    Why: what answers a question is often said across a few turns of one conversation (the
    user's fact, the assistant's reply, a correction later on), and a turn that matches a
    little inside a session that matches a lot is likelier the answer than the same match
    alone. Towards the best, not plus the best: a session's order among its own turns
    stays (a first draft added the best other turn's score, and the turns joined around a
    top hit then passed the hit itself), and the lift stays below `weight` times a first
    rank, which the dense leg's deferral relies on."""
    best: dict[object, float] = {}
    for c in cands:
        row = rows.get(c.key) if c.kind == "messages" else None
        if row is not None:
            best[row["session_id"]] = max(best.get(row["session_id"], 0.0), c.fused)
    out: dict[int, float] = {}
    for c in cands:
        row = rows.get(c.key) if c.kind == "messages" else None
        if row is not None:
            out[c.key] = weight * (best[row["session_id"]] - c.fused)
    return out
