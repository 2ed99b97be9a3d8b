"""The message vectors alone at a million: what a viewed usearch file costs in RSS after
searches, by width and connectivity, and what the graph still finds (issue 37 item 5).

    python bench/vectors_scale.py [--messages 1000000] [--dims 256,128] [--connectivity 16]
        [--dir DIR] [--queries 100]

A full sidecar fill of 1M messages runs at the dense leg's pace (~150-250 msg/s on a shared
machine: over an hour), so this measures the one component that grows fastest on its own:
the core bench's synthetic messages (bench/corpus.py, the same seed as bench/memory.py)
embedded by WordLlama at each width, added to an index built as `store/vector_index.py`
builds one (cosine, int8, `expansion_add` 64; here two insertion threads, for speed), saved,
then viewed from disk in a fresh interpreter as a frozen part is viewed, and searched with
the bench's queries. Reported per index: the file's size, RSS (anonymous and file-backed)
after the view and after the searches, and recall@10 of the graph's answers against exact
search over the same int8-rounded vectors' float originals.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, write_result  # noqa: E402
from bench.corpus import message, queries  # noqa: E402

SEED = 20261130  # bench/memory.py's
BATCH = 50_000

MEASURE = r'''
import json, sys, time
from pathlib import Path
import numpy as np
def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
path, dim, conn, qfile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
q = np.load(qfile)
from usearch.index import Index
out = {"before": {"anon": status("RssAnon"), "file": status("RssFile")}}  # usearch imported, nothing viewed
idx = Index(ndim=dim, metric="cos", dtype="i8", connectivity=conn, expansion_add=64)
idx.view(path)
out["viewed"] = {"anon": status("RssAnon"), "file": status("RssFile")}
keys, took = [], []
for i, v in enumerate(q):
    t0 = time.perf_counter()
    m = idx.search(v, 50)
    took.append((time.perf_counter() - t0) * 1000)
    keys.append([int(k) for k in m.keys[:10]])
    if i + 1 in (100, len(q)):
        out[f"after_{i + 1}"] = {"anon": status("RssAnon"), "file": status("RssFile")}
took.sort()
out["search_p50_ms"] = round(took[len(took) // 2], 3)
out["keys"] = keys
print(json.dumps(out))
'''


def texts(n: int):
    rng = random.Random(SEED)
    for start in range(0, n, BATCH):
        yield [message(rng, i)[1] for i in range(start, min(n, start + BATCH))]


def build(d: Path, n: int, configs: list[tuple[int, int]], qs: list[str]) -> dict[tuple[int, int], dict]:
    """Build (or reuse) each (dim, connectivity) index file in one pass over the texts: each
    text embedded once at full width, a narrower vector its prefix renormalised (what
    `WordLlamaEmbedder(dim)` gives: tests/integration/test_embedder_dim.py). Also the exact
    top 10 of each query over the float vectors."""
    from usearch.index import Index

    from lore_sidecar.llm.embedders import WordLlamaEmbedder

    def narrow(v: np.ndarray, dim: int) -> np.ndarray:
        h = np.ascontiguousarray(v[:, :dim])
        norms = np.linalg.norm(h, axis=1, keepdims=True)
        return np.divide(h, norms, out=h, where=norms > 0)

    out: dict[tuple[int, int], dict] = {}
    todo = []
    for dim, conn in configs:
        path = d / f"m{n}-d{dim}-c{conn}.usearch"
        truth = path.with_suffix(".truth.npy")
        if path.exists() and truth.exists():
            out[(dim, conn)] = {"path": path, "reused": True, "truth": np.load(truth)}
        else:
            todo.append((dim, conn, path, Index(ndim=dim, metric="cos", dtype="i8", connectivity=conn, expansion_add=64)))
    if not todo:
        return out
    emb = WordLlamaEmbedder(256)
    full_q = emb.embed(qs)
    state = {c[:2]: {"best": np.full((len(qs), 10), -2.0, dtype=np.float32), "keys": np.zeros((len(qs), 10), dtype=np.int64),
                     "add_s": 0.0, "q": narrow(full_q, c[0])} for c in todo}
    t_embed, start = 0.0, 0
    for batch in texts(n):
        t0 = time.perf_counter()
        full = emb.embed(batch)
        t_embed += time.perf_counter() - t0
        keys = np.arange(start, start + len(batch), dtype=np.uint64)
        for dim, conn, _path, idx in todo:
            st = state[(dim, conn)]
            vecs = narrow(full, dim)
            t1 = time.perf_counter()
            idx.add(keys, vecs, threads=2)
            st["add_s"] += time.perf_counter() - t1
            sims = st["q"] @ vecs.T  # exact cosine (unit vectors), merged into the running top 10
            allk = np.concatenate([st["keys"], np.broadcast_to(keys.astype(np.int64), sims.shape)], axis=1)
            alls = np.concatenate([st["best"], sims], axis=1)
            top = np.argsort(-alls, axis=1)[:, :10]
            st["best"], st["keys"] = np.take_along_axis(alls, top, 1), np.take_along_axis(allk, top, 1)
        start += len(batch)
        print(f"  {start} embedded and added", file=sys.stderr, flush=True)
    for dim, conn, path, idx in todo:
        idx.save(str(path))
        np.save(path.with_suffix(".truth.npy"), state[(dim, conn)]["keys"])
        out[(dim, conn)] = {"path": path, "reused": False, "embed_s_all": round(t_embed, 1),
                            "add_s": round(state[(dim, conn)]["add_s"], 1), "truth": state[(dim, conn)]["keys"]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--dims", default="256,128")
    ap.add_argument("--connectivity", default="16")
    ap.add_argument("--dir", default="/tmp/lore-vectors-scale")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "vectors_scale.json"))
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    from lore_sidecar.llm.embedders import WordLlamaEmbedder

    qs = queries(random.Random(SEED + 1), args.queries)  # bench/memory.py's recalls
    configs = [(int(x), int(c)) for x in args.dims.split(",") for c in args.connectivity.split(",")]
    built = build(d, args.messages, configs, qs)
    rows = []
    for dim, conn in configs:
        qv = WordLlamaEmbedder(dim).embed(qs)
        qfile = d / f"q{dim}.npy"
        np.save(qfile, qv)
        info = dict(built[(dim, conn)])
        path, truth = info.pop("path"), info.pop("truth")
        got = json.loads(subprocess.run([sys.executable, "-c", MEASURE, str(path), str(dim), str(conn), str(qfile)],
                                        capture_output=True, text=True, check=True).stdout)
        keys = got.pop("keys")
        recall = np.mean([len(set(k) & set(map(int, t))) / 10 for k, t in zip(keys, truth, strict=True)])
        row = {"dim": dim, "connectivity": conn, "file_mb": round(path.stat().st_size / 2**20, 1),
               "bytes_per_vector": round(path.stat().st_size / args.messages, 1), "recall_at_10": round(float(recall), 4),
               **info, **got, "load_avg_1m": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    write_result(args.out, {"machine": machine(), "messages": args.messages, "queries": len(qs), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
