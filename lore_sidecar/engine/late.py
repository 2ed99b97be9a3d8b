"""Late interaction: a chunk compared with a query word piece by word piece, each as the
contextual model read it in its own text.

A pooled vector says what a whole chunk is about; BM25 says which of the query's words it
holds. Between the two, each word piece of the query can find the piece of the chunk that
means the most like it in context ("time sharing" against "time-shared", "compiler" against
"translator of programs"), and the mean of those best matches ranks the chunks the two legs
already found (MaxSim, as in ColBERT, here with the bi-encoder's own token vectors).

What is kept of a chunk: its content word pieces (not [CLS] / [SEP], not punctuation, not an
English stopword), each vector by the signs of its 384 values: 48 bytes a piece, ~6 KB a chunk
of 128 pieces. The query's pieces stay as they are (asymmetric: a float query against bits
loses little; measured in docs/benchmarks.md). Pure functions; the store keeps the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lore_sidecar.engine.recall.query import STOPWORDS

SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]"})


def content(tokens: Sequence[str]) -> list[int]:
    """The places of the word pieces that carry meaning."""
    return [i for i, t in enumerate(tokens)
            if t not in SPECIAL and t not in STOPWORDS and any(ch.isalnum() for ch in t)]


def pack(tokens: Sequence[str], states: np.ndarray) -> bytes:
    """A chunk's content pieces as sign bits, one row of dim/8 bytes a piece (b"" if none)."""
    keep = content(tokens)
    if not keep:
        return b""
    return np.packbits(states[keep] > 0, axis=1).tobytes()


def query(tokens: Sequence[str], states: np.ndarray) -> np.ndarray | None:
    """A query's content pieces (float, unit length), or None when it has none."""
    keep = content(tokens)
    return np.ascontiguousarray(states[keep], dtype=np.float32) if keep else None


def scores(q: np.ndarray, chunks: Sequence[bytes]) -> list[float]:
    """For each chunk, the mean over the query's pieces of their best match among the
    chunk's (cosine against its ±1 vectors); a chunk with no content pieces scores 0. One
    unpacking and one product for all the chunks (half the time of one a chunk)."""
    dim = q.shape[1]
    counts = [len(b) // (dim // 8) for b in chunks]
    kept = [n for n in counts if n]
    if not kept:
        return [0.0] * len(chunks)
    bits = np.unpackbits(np.frombuffer(b"".join(chunks), dtype=np.uint8).reshape(-1, dim // 8), axis=1)
    # q · (2b - 1) = 2 q·b - sum(q), without building the ±1 matrix.
    sims = q @ bits.T.astype(np.float32)
    best = np.maximum.reduceat(sims, np.cumsum([0, *kept[:-1]]), axis=1)
    means = iter((2.0 * best - q.sum(axis=1, keepdims=True)).mean(axis=0) / np.sqrt(dim))
    return [float(next(means)) if n else 0.0 for n in counts]
