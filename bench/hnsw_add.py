"""HNSW insert cost against graph quality, by `expansion_add`: bench messages embedded by
WordLlama, added in parts of 500 as the dense leg adds them (one thread, int8, cosine,
connectivity 16), then each bench query searched in the graph and exactly.

    python bench/hnsw_add.py [--messages 30000] [--expansion 64,32,48] [--runs 2]

Prints one JSON line per build: insert CPU seconds, µs a vector, recall@10 and @50 against
exact search over the same int8 vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.core import SEED  # noqa: E402
from bench.corpus import message, queries  # noqa: E402
from lore_sidecar.llm.embedders import WordLlamaEmbedder  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=30000)
    ap.add_argument("--expansion", default="64,32,48")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    from usearch.index import Index

    n, rng = args.messages, random.Random(SEED)
    emb = WordLlamaEmbedder()
    vecs = emb.embed([message(rng, i)[1] for i in range(n)])
    qs = emb.embed(queries(random.Random(SEED + 1), 300))
    keys = np.arange(1, n + 1, dtype=np.uint64)
    exact = Index(ndim=emb.dim, metric="cos", dtype="i8")
    exact.add(keys, vecs, threads=1)
    truth = {k: [set(exact.search(q, k, exact=True).keys.tolist()) for q in qs] for k in (10, 50)}
    for _ in range(args.runs):
        for ea in (int(x) for x in args.expansion.split(",")):
            idx = Index(ndim=emb.dim, metric="cos", dtype="i8", connectivity=16, expansion_add=ea)
            t = time.thread_time()
            for s in range(0, n, 500):
                idx.add(keys[s : s + 500], vecs[s : s + 500], threads=1)
            took = time.thread_time() - t
            got = {k: float(np.mean([len(set(idx.search(q, k).keys.tolist()) & want) / max(1, len(want))
                                     for q, want in zip(qs, truth[k], strict=True)])) for k in (10, 50)}
            print(json.dumps({"messages": n, "expansion_add": ea, "insert_cpu_s": round(took, 2),
                              "us_per_vector": round(took / n * 1e6, 1), "recall@10": round(got[10], 4),
                              "recall@50": round(got[50], 4), "load": round(os.getloadavg()[0], 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
