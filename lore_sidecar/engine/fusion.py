"""Rank fusion: weighted reciprocal rank fusion plus a small recency bonus. Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lore_sidecar.model import Candidate


def fuse(
    lexical: Sequence[tuple[str, int, float]],
    vector: Sequence[tuple[str, int, float]],
    *,
    lexical_weight: float,
    vector_weight: float,
    k: int,
) -> list[Candidate]:
    """Weighted RRF. Each leg is already ranked best-first. Equal weights let a weak leg drag
    good lexical hits down, so the legs are weighted (and a leg may be switched off with 0)."""
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


def recency_bonus(age_days: float, *, weight: float, half_life_days: float, k: int) -> float:
    """A bonus on the RRF scale (at most `weight` times a first-rank contribution) that
    halves every `half_life_days`."""
    if weight <= 0 or age_days != age_days:  # NaN guard
        return 0.0
    age_days = max(0.0, age_days)
    return weight / (k + 1) * math.pow(0.5, age_days / half_life_days)
