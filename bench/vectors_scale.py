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

    python bench/vectors_scale.py --big 200000,1000000 [--dir DIR] [--queries 100]

`--big`: the large frozen part (store/vector_big.py) against the int8 graph at each size,
over the same int8 rows (the messages at width 256, quantised as the delta quantises them):
recall@10 of each against exact int8 cosine search over those rows (the delta's own exact
search), the binary graph's recall by re-rank factor and with or without the centre taken
off, RSS of a fresh interpreter after opening each and after the searches, search p50.
The large part is written by `VectorIndex`'s own fold (one insertion thread); the int8
graph as the bench builds it above (two threads).
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


BIG_MEASURE = r'''
import json, sys, time
from pathlib import Path
import numpy as np
def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
what, path, qfile, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
factors = [int(x) for x in sys.argv[5].split(",")] if len(sys.argv) > 5 and sys.argv[5] else []
q = np.load(qfile)
import onnxruntime  # noqa: F401  (the sidecar's import order)
from usearch.index import Index
from lore_sidecar.store import vector_big
from lore_sidecar.store.vector_index import VectorIndex
out = {"before": {"anon": status("RssAnon"), "file": status("RssFile")}}
if what == "i8":
    idx = Index(ndim=q.shape[1], metric="cos", dtype="i8", connectivity=16, expansion_add=64)
    idx.view(path)
    ask = lambda v, n: [int(k) for k in idx.search(v, n).keys]
elif what == "big":
    vi = VectorIndex(Path(path), spaces={"messages": ("m", q.shape[1])}, writable=False)
    ask = lambda v, n: [k for _, k, _ in vi.search(["messages"], None, v, n)]
else:  # a BigFrozen by its two files
    g, r = path.split("|")
    bf = vector_big.BigFrozen(Path(g), Path(r), q.shape[1])
    ask = lambda v, n: [int(k) for k in bf.search(v, n).keys]
out["opened"] = {"anon": status("RssAnon"), "file": status("RssFile")}
keys, took = [], []
for v in q:
    t0 = time.perf_counter()
    got = ask(v, limit)
    took.append((time.perf_counter() - t0) * 1000)
    keys.append(got[:10])
out["after"] = {"anon": status("RssAnon"), "file": status("RssFile")}
took.sort()
out["search_p50_ms"] = round(took[len(took) // 2], 3)
out["search_p95_ms"] = round(took[int(len(took) * 0.95)], 3)
out["keys"] = keys
by = {}
for f in factors:  # recall by re-rank factor (after the RSS figures: these search more)
    vector_big.RERANK = f
    by[f] = [ask(v, limit)[:10] for v in q]
out["by_factor"] = by
print(json.dumps(out))
'''


def big_rows(d: Path, n: int) -> np.ndarray:
    """The first `n` messages' int8 rows at width 256 (cached: a prefix of a longer cache
    serves, the texts being one sequence)."""
    from lore_sidecar.llm.embedders import WordLlamaEmbedder
    from lore_sidecar.store.vector_flat import quantize

    for f in sorted(d.glob("rows-*.npy"), key=lambda p: int(p.stem.split("-")[1])):
        if int(f.stem.split("-")[1]) >= n:
            return np.load(f, mmap_mode="r")[:n]
    emb = WordLlamaEmbedder(256)
    out = np.zeros((n, 256), dtype=np.int8)
    at = 0
    for batch in texts(n):
        out[at:at + len(batch)] = quantize(emb.embed(batch))
        at += len(batch)
        print(f"  {at} embedded", file=sys.stderr, flush=True)
    np.save(d / f"rows-{n}.npy", out)
    return out


def big(args, d: Path, qs: list[str]) -> int:
    from usearch.index import Index, MetricKind, search

    from lore_sidecar.llm.embedders import WordLlamaEmbedder
    from lore_sidecar.store import vector_big
    from lore_sidecar.store.vector_flat import quantize
    from lore_sidecar.store.vector_index import VectorIndex

    qv = WordLlamaEmbedder(256).embed(qs)
    qfile = d / "q256.npy"
    np.save(qfile, qv)
    rows_out = []
    sizes = [int(x) for x in args.big.split(",")]
    big_rows(d, max(sizes))  # embedded once: the smaller sizes are its prefixes
    for n in sizes:
        rows = np.ascontiguousarray(big_rows(d, n))
        keys = np.arange(n, dtype=np.uint64)
        t0 = time.perf_counter()
        truth = [search(rows, quantize(v)[0], 10, MetricKind.Cos, exact=True, threads=1).keys.tolist() for v in qv]
        exact_ms = (time.perf_counter() - t0) * 1000 / len(qv)
        files = {}
        i8 = d / f"i8-{n}.usearch"
        if not i8.exists():
            idx = Index(ndim=256, metric="cos", dtype="i8", connectivity=16, expansion_add=64)
            t0 = time.perf_counter()
            idx.add(keys, rows, threads=2)
            files["i8_add_s"] = round(time.perf_counter() - t0, 1)
            idx.save(str(i8))
            del idx
        bd = d / f"big-{n}"
        if not (bd / "vectors.json").exists() and n > 300_000:
            # Past 300k the fold's one insertion thread takes too long on a shared machine:
            # the same files (centre, codes, rows in key order) with the graph built by two
            # threads, as the int8 graph beside it is.
            bd.mkdir(exist_ok=True)
            t0 = time.perf_counter()
            centre = np.trunc(rows.mean(axis=0, dtype=np.float64)).astype(np.int8)
            g = vector_big.new_graph(256)
            for s in range(0, n, BATCH):
                g.add(keys[s:s + BATCH], vector_big.codes(rows[s:s + BATCH], centre), threads=2)
            g.save(str(bd / "messages-1.f1-bench.b1.usearch"))
            del g
            vector_big.write_rows(bd / "messages-1.f1-bench.rows", 256, centre, [(keys, rows)])
            files["big_build_s"] = round(time.perf_counter() - t0, 1)
            (bd / "vectors.json").write_text(json.dumps({"seq": 1, "spaces": {"messages": "m/256"}, "late": 3, "parts": {
                "messages-1": {"frozen": "messages-1.f1-bench.b1.usearch", "delta": None, "dead": [], "gen": 1,
                               "rows": "messages-1.f1-bench.rows"}}}))
        if not (bd / "vectors.json").exists():
            vi = VectorIndex(bd, spaces={"messages": ("m", 256)}, writable=True, fold_at=n, big_at=1)
            for s in range(0, n, BATCH):
                vi.upsert("messages", 1, keys[s:s + BATCH], rows[s:s + BATCH])
            t0 = time.perf_counter()
            vi.save(1)  # one fold: the int8 rows become a large part (centre taken off)
            files["big_fold_s"] = round(time.perf_counter() - t0, 1)
            del vi
        plain = d / f"plain-{n}"  # the same graph without the centre taken off (at 300k or fewer only)
        if n <= 300_000 and not (plain / "g.b1.usearch").exists():
            plain.mkdir(exist_ok=True)
            zero = np.zeros(256, dtype=np.int8)
            g = vector_big.new_graph(256)
            g.add(keys, vector_big.codes(rows, zero), threads=2)
            g.save(str(plain / "g.b1.usearch"))
            vector_big.write_rows(plain / "r.rows", 256, zero, [(keys, rows)])
            del g
        entry = json.loads((bd / "vectors.json").read_text())["parts"]["messages-1"]
        size = {"i8_file_mb": round(i8.stat().st_size / 2**20, 1),
                "b1_file_mb": round((bd / entry["frozen"]).stat().st_size / 2**20, 1),
                "rows_file_mb": round((bd / entry["rows"]).stat().st_size / 2**20, 1)}

        def run(what: str, path: str, limit: int, factors: str = "", truth: list = truth) -> dict:
            got = json.loads(subprocess.run([sys.executable, "-c", BIG_MEASURE, what, path, str(qfile), str(limit), factors],
                                            capture_output=True, text=True, check=True, cwd=ROOT).stdout)
            def rec(ks):
                return round(float(np.mean([len(set(k) & set(t)) / 10 for k, t in zip(ks, truth, strict=True)])), 4)
            got["recall_at_10"] = rec(got.pop("keys"))
            got["recall_by_factor"] = {f: rec(ks) for f, ks in got.pop("by_factor").items()}
            return got

        row = {"messages": n, "exact_search_ms": round(exact_ms, 1), **files, **size, "load_avg_1m": os.getloadavg()[0]}
        for limit in (10, 50):
            row[f"i8_limit{limit}"] = run("i8", str(i8), limit)
            row[f"big_limit{limit}"] = run("big", str(bd), limit, "2,5,10,20" if limit == 10 else "")
        if n <= 300_000:
            row["plain_limit10"] = run("frozen", f"{plain / 'g.b1.usearch'}|{plain / 'r.rows'}", 10, "2,5,10,20")
        rows_out.append(row)
        print(json.dumps(row), flush=True)
    write_result(args.out, {"machine": machine(), "queries": len(qs), "big": rows_out})
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--dims", default="256,128")
    ap.add_argument("--connectivity", default="16")
    ap.add_argument("--dir", default="/tmp/lore-vectors-scale")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--big", help="sizes (comma-separated) at which to compare the large part with the int8 graph")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "vectors_scale.json"))
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    from lore_sidecar.llm.embedders import WordLlamaEmbedder

    qs = queries(random.Random(SEED + 1), args.queries)  # bench/memory.py's recalls
    if args.big:
        return big(args, d, qs)
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
