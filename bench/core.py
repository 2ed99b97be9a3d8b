"""Core sidecar benchmark: initialize latency, ingest rate, workspace indexing rate, recall
latency at 10k and 100k messages (hybrid, query embedding included), peak RSS, with SQLite
FTS5 measured on the same messages and queries as a peer.

    python bench/core.py [--sizes 10000,100000] [--queries 300] [--out bench/results/core.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, rss_mb, write_result  # noqa: E402
from bench.corpus import message, note_file, queries, source_file  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.app import open_engine  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.engine.recall.query import query_terms  # noqa: E402
from lore_sidecar.settings import load_settings  # noqa: E402

SEED = 20261130
PARTS = ("initialize", "messages", "workspace", "workspace_dense", "notes")  # --only picks some



OPTIONS: dict = {}  # --options: initializationOptions for every engine and sidecar of the run


def engine(store: Path, folders: list[str], **opts):
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={"storeDir": str(store), **OPTIONS, **opts})
    return open_engine(settings, folders)


def bench_initialize(tmp: Path, runs: int = 7) -> dict:
    """Spawn to the reply to `initialize`, run alternately from the source tree as it is
    (where PYTHONDONTWRITEBYTECODE is set, as here, each start compiles the package's
    modules) and from a copy of the package with its bytecode compiled, as `pip install`
    leaves an installed one (the copy is first on PYTHONPATH; nothing is written into the
    tree)."""
    installed = tmp / "installed"
    shutil.copytree(ROOT / "lore_sidecar", installed / "lore_sidecar", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(installed / "lore_sidecar")], check=True)
    compiled = {**os.environ, "PYTHONPATH": str(installed)}
    times: dict[str, list[float]] = {"source": [], "compiled": []}
    for i in range(runs):
        for name, env in (("source", None), ("compiled", compiled)):
            # Started outside the tree: `python -m` puts the working folder first on sys.path.
            c = StdioClient(sidecar_command("--store-dir", str(tmp / f"init-{name}-{i}")), env=env, cwd=str(tmp))
            t0 = time.perf_counter()
            c.request("initialize", {"processId": os.getpid(), "capabilities": {}, "initializationOptions": {"indexWorkspace": False}})
            times[name].append((time.perf_counter() - t0) * 1000)
            c.notify("initialized", {})
            c.close()
    return {"runs": runs, "p50_ms": round(statistics.median(times["source"]), 1), "max_ms": round(max(times["source"]), 1),
            "compiled_p50_ms": round(statistics.median(times["compiled"]), 1),
            "compiled_max_ms": round(max(times["compiled"]), 1)}


def bench_messages(tmp: Path, sizes: list[int], n_queries: int) -> dict:
    rng = random.Random(SEED)
    store = tmp / "msgs"
    project = tmp / "project"
    project.mkdir(exist_ok=True)
    e = engine(store, [str(project)], indexWorkspace=False)
    fts = sqlite3.connect(tmp / "fts.db")
    fts.execute("CREATE VIRTUAL TABLE m USING fts5(text, tokenize='porter')")
    qs = queries(random.Random(SEED + 1), n_queries)
    out = {"sizes": []}
    have = 0
    batch = 1000
    for size in sizes:
        t0 = time.perf_counter()
        added = 0
        while have < size:
            msgs = []
            for _ in range(min(batch, size - have)):
                role, text = message(rng, have)
                msgs.append({"role": role, "content": text, "msg_id": f"m{have}", "created_at": None, "tool_name": None, "tool_call_id": None})
                have += 1
            e.capture.record_messages(project=str(project), session_id=f"s{have // 200}", harness="bench", messages=msgs)
            fts.executemany("INSERT INTO m(text) VALUES (?)", [(m["content"],) for m in msgs])
            added += len(msgs)
        recorded = time.perf_counter() - t0
        e.view.indexer.wait_for(e.records.outbox_head(), 3600)  # by its words
        lexical = time.perf_counter() - t0
        e.index.wait(3600)  # and by its meaning (the dense leg follows on its own thread)
        searchable = time.perf_counter() - t0
        fts.commit()
        # Warm both, then time every query.
        for q in qs[:20]:
            e.recall(q, project=str(project), limit=10)
        lat, lat_lex = [], []
        for q in qs:
            t = time.perf_counter()
            e.recall(q, project=str(project), limit=10)
            lat.append((time.perf_counter() - t) * 1000)
        for q in qs:
            t = time.perf_counter()
            e.recall(q, project=str(project), limit=10, lexical_only=True)
            lat_lex.append((time.perf_counter() - t) * 1000)
        lat_fts = []
        for q in qs:
            terms = query_terms(q)
            match = " OR ".join(f'"{t}"' for t in terms)
            t = time.perf_counter()
            fts.execute("SELECT rowid, bm25(m) FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT 10", (match,)).fetchall()
            lat_fts.append((time.perf_counter() - t) * 1000)
        index_bytes = sum(f.stat().st_size for f in (store / "index").rglob("*") if f.is_file())
        out["sizes"].append({
            "messages": size,
            "ingest_msgs_per_s_recorded": round(added / recorded),
            "ingest_msgs_per_s_lexical": round(added / lexical),
            "ingest_msgs_per_s_searchable": round(added / searchable),
            "recall_hybrid_p50_ms": round(statistics.median(lat), 2),
            "recall_hybrid_p95_ms": round(pct(lat, 95), 2),
            "recall_lexical_p50_ms": round(statistics.median(lat_lex), 2),
            "fts5_p50_ms": round(statistics.median(lat_fts), 2),
            "fts5_p95_ms": round(pct(lat_fts, 95), 2),
            "hybrid_vs_fts5_p50": round(statistics.median(lat) / statistics.median(lat_fts), 2),
            "rss_mb": rss_mb(),  # this process now: the engine holding these messages (+ the FTS5 peer)
            "index_mb": round(index_bytes / 1e6, 1),
            "db_mb": round(sum(f.stat().st_size for f in store.glob("lore.db*")) / 1e6, 1),
        })
        print(json.dumps(out["sizes"][-1]), file=sys.stderr)
    e.close()
    fts.close()
    out["sidecar"] = bench_sidecar(store, project, qs, have)
    print(json.dumps(out["sidecar"]), file=sys.stderr)
    return out


def bench_sidecar(store: Path, project: Path, qs: list[str], messages: int) -> dict:
    """A real sidecar over stdio on the store just filled: its RSS while it holds the
    messages and answers recalls, and recall latency on the wire (framing, validation and
    JSON included)."""
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(project, options={"indexWorkspace": False, "watch": False, **OPTIONS})
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            st = c.request("lore/status")
            if st["indexLagMs"] == 0 and st["vectorLag"] == 0:
                break
            time.sleep(0.1)
        for q in qs[:20]:
            c.request("lore/recall", {"query": q, "limit": 10})
        lat = []
        for q in qs:
            t = time.perf_counter()
            c.request("lore/recall", {"query": q, "limit": 10})
            lat.append((time.perf_counter() - t) * 1000)
        return {"messages": messages, "rss_mb": rss_mb(c.proc.pid), "peak_rss_mb": rss_mb(c.proc.pid, "VmHWM"),
                "recall_p50_ms": round(statistics.median(lat), 2), "recall_p95_ms": round(pct(lat, 95), 2)}
    finally:
        c.close()


def _write_tree(ws: Path, n_files: int, make, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(n_files):
        rel, text = make(rng, i)
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (ws / ".git").mkdir()


def _fts5_folder(ws: Path, db: Path) -> float:
    """The peer: every file under `ws` read and inserted into SQLite FTS5 (porter), one
    transaction; seconds until committed."""
    t0 = time.perf_counter()
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(path, text, tokenize='porter')")
    conn.executemany("INSERT INTO f VALUES (?, ?)", ((str(p), p.read_text()) for p in ws.rglob("*") if p.is_file()))
    conn.commit()
    conn.close()
    return time.perf_counter() - t0


def _timed_scan(e, *, embedded: bool = False) -> float:
    """Seconds for a scan of the engine's folders until searchable by their words (or, with
    `embedded`, until the files' model has embedded every chunk too)."""
    t0 = time.perf_counter()
    e.index.scan()
    if embedded:
        e.index.wait(3600)
    else:
        e.view.indexer.wait_for(e.records.outbox_head(), 3600)
    return time.perf_counter() - t0


def bench_notes(tmp: Path, n_notes: int) -> dict:
    """A folder of markdown notes (issue 14: 20,000 of them searchable by their words in
    10 s), FTS5 on the same files in the same run."""
    ws = tmp / "notes"
    _write_tree(ws, n_notes, note_file, SEED + 3)
    e = engine(tmp / "notes-store", [str(ws)])
    try:
        by_words = _timed_scan(e)
        counts = e.records.counts(None)
    finally:
        e.close()
    fts = _fts5_folder(ws, tmp / "notes-fts.db")
    return {"notes": counts["files"], "chunks": counts["chunks"], "lexical_wall_s": round(by_words, 2),
            "notes_per_s_lexical": round(counts["files"] / by_words), "fts5_wall_s": round(fts, 2)}


def bench_workspace(tmp: Path, n_files: int) -> dict:
    """A first scan of `n_files` source files until searchable by their words (the dense leg
    still embedding behind it, as a user's sidecar does), then an unchanged rescan; FTS5 on
    the same files in the same run."""
    ws = tmp / "ws"
    _write_tree(ws, n_files, source_file, SEED + 2)
    e = engine(tmp / "ws-store", [str(ws)])
    try:
        by_words = _timed_scan(e)
        counts = e.records.counts(None)
        rescan = _timed_scan(e)  # nothing changed: stat-only rescan
    finally:
        e.close()  # mid catch-up: the dense leg stops after the batch it is embedding
    fts = _fts5_folder(ws, tmp / "ws-fts.db")
    return {"files": counts["files"], "chunks": counts["chunks"], "files_per_s_lexical": round(counts["files"] / by_words),
            "fts5_files_per_s": round(counts["files"] / fts), "unchanged_rescan_ms": round(rescan * 1000, 1)}


def bench_workspace_dense(tmp: Path, n_files: int) -> dict:
    """The same kind of folder until fully indexed: every chunk embedded by the files' model
    (MiniLM, ~30 chunks/s on two cores, so a smaller folder)."""
    ws = tmp / "ws-dense"
    _write_tree(ws, n_files, source_file, SEED + 2)
    e = engine(tmp / "ws-dense-store", [str(ws)])
    try:
        took = _timed_scan(e, embedded=True)
        counts = e.records.counts(None)
    finally:
        e.close()
    return {"files": counts["files"], "chunks": counts["chunks"], "files_per_s": round(counts["files"] / took),
            "chunks_per_s_dense": round(counts["chunks"] / took)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--notes", type=int, default=20000)
    ap.add_argument("--dense-files", type=int, default=200, help="the folder timed until every chunk is embedded")
    ap.add_argument("--init-runs", type=int, default=7, help="sidecar starts timed, each from source and compiled")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "core.json"))
    ap.add_argument("--options", default="{}", help="initializationOptions for every engine and sidecar, as JSON")
    ap.add_argument("--only", default=",".join(PARTS), help=f"some of {','.join(PARTS)} (a shorter run)")
    args = ap.parse_args()
    OPTIONS.update(json.loads(args.options))
    only = set(args.only.split(","))
    if only - set(PARTS):
        ap.error(f"--only: unknown {sorted(only - set(PARTS))}")
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-"))
    try:
        runs = {
            "initialize": lambda: bench_initialize(tmp, args.init_runs),
            # Messages before the workspace: the files' model (MiniLM) then never counts in
            # the RSS of a conversation store.
            "messages": lambda: bench_messages(tmp, [int(s) for s in args.sizes.split(",")], args.queries),
            "workspace": lambda: bench_workspace(tmp, args.files),
            "workspace_dense": lambda: bench_workspace_dense(tmp, args.dense_files),
            "notes": lambda: bench_notes(tmp, args.notes),
        }
        result = {
            "machine": machine(),
            "versions": {"lore_sidecar": __version__, **{m: _version(m) for m in ("tantivy", "usearch", "pygls", "wordllama")}},
            **{name: run() for name, run in runs.items() if name in only},
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load_at_end": round(os.getloadavg()[0], 1),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


def _version(module: str) -> str:
    from importlib.metadata import version

    try:
        return version(module)
    except Exception:
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())
