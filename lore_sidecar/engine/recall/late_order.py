"""Late interaction's step in recall: the best candidates of each kind whose model gives word
pieces (MiniLM: workspace files by default, every kind with `embedder = "minilm"`) ordered
again by how well the query's pieces find their match among each one's own
(engine/late.py).

Trigger: the query was embedded by such a model. Why: the pooled vector blurs a text into
one point and BM25 sees only shared words; matching piece by piece reorders the top of both
(measured: document search nDCG@10 +0.04, code +0.01, conversation R@5 +0.015 with MiniLM;
docs/benchmarks.md). Outcome: the first `lateCandidates` of a group (code, prose, or the
kind) are ordered by their fused score plus `filesLateWeight` (files) or `lateWeight` (the
others) times their match, both min-max scaled over that head, and mapped back onto the
span of scores the head had: a candidate beyond it stays below, the group weighs what it
weighed against the others, and one without pieces yet (still being embedded) keeps its
fused part only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from lore_sidecar.engine import late
from lore_sidecar.engine.recall.fusion import min_max
from lore_sidecar.filetypes import is_code_path
from lore_sidecar.model import Candidate


def weight(settings, kind: str) -> float:
    return settings.files_late_weight if kind == "files" else settings.late_weight


def kinds_with_pieces(kinds: Iterable[str], settings, models) -> set[str]:
    """Of these kinds, those whose model gives word pieces and whose late weight counts."""
    if models is None:
        return set()
    return {k for k in kinds if weight(settings, k) > 0 and hasattr(models.for_kind(k), "embed_with_tokens")}


def reorder(cands: list[Candidate], pieces: Mapping[str, np.ndarray], chunk_rows, settings,
            late_of: Callable[[str, list[int]], dict[int, bytes]]) -> list[Candidate]:
    """`pieces`: the query's, for each kind `kinds_with_pieces` chose; `late_of(kind, keys)`:
    the candidates' stored ones."""
    if not pieces:
        return cands
    heads: dict[tuple[str, bool], list[Candidate]] = {}
    for c in cands:
        if c.kind not in pieces:
            continue
        if c.kind == "files":
            if chunk_rows is None or c.key not in chunk_rows:
                continue
            group = ("files", is_code_path(chunk_rows[c.key]["path"]))
        else:
            group = (c.kind, False)
        head = heads.setdefault(group, [])
        if len(head) < settings.late_candidates:
            head.append(c)
    for (kind, _), head in heads.items():
        packed = late_of(kind, [c.key for c in head])
        found = [c for c in head if c.key in packed]
        if len(head) > 1 and found:
            matched = dict(zip((c.key for c in found),
                               min_max(late.scores(pieces[kind], [packed[c.key] for c in found])), strict=True))
            _rescore(head, matched, weight(settings, kind))
    return sorted(cands, key=lambda c: (-c.fused, c.kind, c.key))


def _rescore(head: list[Candidate], matched: dict[int, float], w: float) -> None:
    lo, hi = min(c.fused for c in head), max(c.fused for c in head)
    if hi <= lo:
        return
    both = [z + w * matched.get(c.key, 0.0) for c, z in zip(head, min_max([c.fused for c in head]), strict=True)]
    for c, z in zip(head, min_max(both), strict=True):
        c.fused = lo + (hi - lo) * z
