"""The vector delta's exact scan (store/vector_flat.py), three ways over the same rows.

`FlatDelta.search` with onnxruntime's MatMulInteger (the default sidecar's path), the same
with onnxruntime unloaded (numpy's einsum), and usearch's exact search over the same int8
rows (what the delta used before), alternated round by round. Rows are WordLlama vectors of
generated messages (bench/core.py's), so the distances are a real corpus's.

    python bench/delta_scan.py --rows 8192,32768 --limit 50 --queries 200 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import onnxruntime  # noqa: F401  before usearch (llm/minilm.py)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from usearch.index import MetricKind, search  # noqa: E402

from bench import core  # noqa: E402
from lore_sidecar.llm.embedders import WordLlamaEmbedder  # noqa: E402
from lore_sidecar.store import vector_flat  # noqa: E402
from lore_sidecar.store.vector_flat import FlatDelta, quantize  # noqa: E402


def timed(fn, queries) -> list[float]:
    out = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="8192,32768")
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    emb = WordLlamaEmbedder()
    sizes = [int(s) for s in args.rows.split(",")]
    rng = random.Random(core.SEED)
    texts = [core.message(rng, i)[1] for i in range(max(sizes))]
    vecs = emb.embed(texts)
    qv = emb.embed(core.queries(random.Random(core.SEED + 1), args.queries))
    report = {"load_before": os.getloadavg()[0], "limit": args.limit, "sizes": []}
    for n in sizes:
        delta = FlatDelta(vecs.shape[1])
        delta.upsert(np.arange(n, dtype=np.uint64), vecs[:n])
        rows = quantize(vecs[:n])
        times: dict[str, list[float]] = {"onnxruntime": [], "numpy": [], "usearch exact (before)": []}
        for _ in range(args.rounds):
            times["onnxruntime"] += timed(lambda q, d=delta: d.search(q, args.limit), qv)
            ort = sys.modules.pop("onnxruntime")
            saved, vector_flat._session = vector_flat._session, None
            try:
                times["numpy"] += timed(lambda q, d=delta: d.search(q, args.limit), qv)
            finally:
                sys.modules["onnxruntime"], vector_flat._session = ort, saved
            times["usearch exact (before)"] += timed(
                lambda q, r=rows: search(r, quantize(q)[0], args.limit, MetricKind.Cos, exact=True, threads=1), qv)
        # The three agree on the answer (the kernel is exact): the share of the same keys.
        same = statistics.mean(
            len({k for k, _ in delta.search(q, args.limit)}
                & set(search(rows, quantize(q)[0], args.limit, MetricKind.Cos, exact=True, threads=1).keys.tolist()))
            / args.limit for q in qv[:50])
        report["sizes"].append({"rows": n, "same_keys_as_usearch": round(same, 4), **{
            name: {"p50_ms": round(statistics.median(t), 3), "p95_ms": round(float(np.percentile(t, 95)), 3)}
            for name, t in times.items()}})
        print(json.dumps(report["sizes"][-1]), file=sys.stderr)
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
