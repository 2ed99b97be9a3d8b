"""Where a sidecar's memory goes, holding N messages with everything embedded (issue 37 item 5).

    python bench/memory.py [--messages 100000] [--keep DIR] [--tree DIR] [--compare DIR --rounds N]

1. A store is filled with N messages of the core bench's synthetic coding sessions and every
   one embedded (WordLlama, the conversation model), in this process, which then closes it.
   A kept store holding fewer messages is grown to N (the same sequence carried on).
2. A real sidecar is spawned over stdio on that store, waits until both legs are level,
   answers 100 recalls (their round trips timed: p50/p95), and its RSS (anonymous and
   file-backed) and peak are read, with /proc/<pid>/smaps grouped by what
   is mapped (the native libraries, the interpreter, the store's memory-mapped files, and
   anonymous memory: the C heap and the allocators' arenas, where Python objects, numpy
   arrays, Tantivy's and usearch's heaps all live).
3. The anonymous part is split by loading the same components one after another in a fresh
   interpreter (SQLite, the Tantivy reader, WordLlama, the usearch indexes, onnxruntime),
   reading RSS and tracemalloc's Python heap after each step.

`--tree DIR` runs all of it with the lore_sidecar of another tree (a copy of an older
commit); `--compare DIR --rounds N` measures the sidecar N times with this tree and N times
with DIR, alternately, on the same store (fill it with the older tree: a newer index layout
may not be readable by older code).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, rss_mb, write_result  # noqa: E402
from bench.corpus import message, queries  # noqa: E402

SEED = 20261130
GROUPS = [  # (group, pattern on the mapping's path), first match wins
    ("onnxruntime", r"onnxruntime"), ("usearch (+numkong)", r"usearch|numkong"), ("tantivy", r"tantivy"),
    ("tokenizers", r"tokenizers"), ("numpy", r"numpy"), ("WordLlama table (mmap)", r"wordllama"),
    ("python + stdlib ext", r"python3|libpython|lib-dynload"),
    ("store files (mmap)", r"\.usearch$|/index/|lore\.db"), ("other libraries", r"\.so"),
    ("[heap] (brk: C heap, Python objects)", r"^\[heap\]$"), ("stacks", r"^\[stack"),
]


def fill(store: Path, project: Path, n: int, options: dict | None = None) -> dict:
    """Fill the store to `n` messages (a kept store with fewer is grown: the same seeded
    sequence is drawn again and carried on from where it stopped)."""
    import sqlite3

    if (store / "lore.db").exists():
        with sqlite3.connect(f"file:{store / 'lore.db'}?mode=ro", uri=True) as db:
            have = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        if have >= n:  # reused as it is: not even opened by a writer (which might save anew)
            return {"messages": have, "reused": True}
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(store), "indexWorkspace": False, "watch": False, **(options or {})})
    e = open_engine(settings, [str(project)])
    have = e.records.counts(None)["messages"]
    rng = random.Random(SEED)
    for i in range(have):
        message(rng, i)
    t0 = time.perf_counter()
    for start in range(have, n, 1000):
        msgs = []
        for i in range(start, min(n, start + 1000)):
            role, text = message(rng, i)
            msgs.append({"role": role, "content": text, "msg_id": f"m{i}", "created_at": None, "tool_name": None, "tool_call_id": None})
        e.capture.record_messages(project=str(project), session_id=f"s{start // 200}", harness="bench", messages=msgs)
    recorded = time.perf_counter() - t0
    assert e.index.wait(7200)
    took = time.perf_counter() - t0
    e.close()
    return {"messages": n, "from": have, "recorded_s": round(recorded, 1), "filled_s": round(took, 1),
            "searchable_by_meaning_msg_s": round((n - have) / took, 1)}


def _resident(pid: int):
    """(mapping's file name or "", resident KB) for each mapping in /proc/<pid>/smaps."""
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
        if head:
            name = head.group(1)
        elif line.startswith("Rss:"):
            yield name, int(line.split()[1])


def smaps(pid: int) -> dict[str, float]:
    """RSS by group, MB, from /proc/<pid>/smaps."""
    out: dict[str, float] = defaultdict(float)
    for name, kb in _resident(pid):
        group = next((g for g, pat in GROUPS if re.search(pat, name)), "anonymous (mmap'd arenas, large buffers)" if not name else "other files")
        out[group] += kb / 1024
    return {k: round(v, 1) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def store_files(pid: int) -> dict[str, float]:
    """RSS of each store file the process maps, MB: each usearch file by name, Tantivy's
    segment files summed by extension, the SQLite files by name."""
    out: dict[str, float] = defaultdict(float)
    for name, kb in _resident(pid):
        if "/store/" not in name and "round-store" not in name:
            continue
        base = name.rsplit("/", 1)[-1]
        if "/text/" in name:
            key = f"tantivy *{Path(base).suffix or base}"
        elif base.endswith(".usearch"):
            key = f"usearch {base} ({Path(name).stat().st_size / 2**20:.1f} MB on disk)" if Path(name).exists() else f"usearch {base}"
        else:
            key = base
        out[key] += kb / 1024
    return {k: round(v, 1) for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v >= 0.05}


def _pss_mb(pid: int) -> float:
    """Proportional set size: each shared page (a store file two sidecars map) counted by half."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _recalls(c) -> list[float]:
    took = []
    for q in queries(random.Random(SEED + 1), 100):
        t0 = time.perf_counter()
        c.request("lore/recall", {"query": q, "limit": 10})
        took.append((time.perf_counter() - t0) * 1000)
    return sorted(took)


def sidecar(store: Path, project: Path, env: dict[str, str] | None = None, tree: Path | None = None,
            followers: int = 0, options: dict | None = None) -> dict:
    """A sidecar (the writer) level and after 100 recalls; with `followers`, as many more
    sidecars on the same store, each after the same 100 recalls, and every one's RSS and PSS."""
    from lore_sidecar.client import StdioClient, sidecar_command

    env = {**os.environ, **(env or {})}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    clients = [StdioClient(sidecar_command("--store-dir", str(store)), env=env)]
    try:
        c = clients[0]
        c.initialize(project, options={"indexWorkspace": False, "watch": False, **(options or {})})
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:
            st = c.request("lore/status")
            if st["indexLagMs"] == 0 and st["vectorLag"] == 0:
                break
            time.sleep(0.2)
        took = _recalls(c)
        pid = c.proc.pid
        out = {"tree": str(tree or ROOT), "rss_mb": rss_mb(pid), "anon_mb": rss_mb(pid, "RssAnon"),
               "file_mb": rss_mb(pid, "RssFile"), "peak_rss_mb": rss_mb(pid, "VmHWM"),
               "recall_p50_ms": round(took[49], 2), "recall_p95_ms": round(took[94], 2),
               "load_avg_1m": os.getloadavg()[0], "smaps_mb": smaps(pid), "store_files_mb": store_files(pid),
               "threads": len(os.listdir(f"/proc/{pid}/task"))}
        for _ in range(followers):
            f = StdioClient(sidecar_command("--store-dir", str(store)), env=env)
            clients.append(f)
            f.initialize(project, options={"indexWorkspace": False, "watch": False, **(options or {})})
            _recalls(f)
        if followers:
            out["sidecars"] = [{"role": "writer" if i == 0 else "follower", "rss_mb": rss_mb(x.proc.pid),
                                "anon_mb": rss_mb(x.proc.pid, "RssAnon"), "file_mb": rss_mb(x.proc.pid, "RssFile"),
                                "pss_mb": _pss_mb(x.proc.pid)} for i, x in enumerate(clients)]
        return out
    finally:
        for x in clients:
            x.close()


COMPONENTS = r'''
import json, sys, tracemalloc
from pathlib import Path
if sys.argv[2] == "traced":
    tracemalloc.start()
store = Path(sys.argv[1])
steps = []
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
def step(name):
    steps.append({"step": name, "rss_mb": round(rss(), 1), "python_heap_mb": round(tracemalloc.get_traced_memory()[0] / 2**20, 1)})
step("interpreter")
import lore_sidecar.app, lore_sidecar.rpc.server  # noqa: E401  the modules a sidecar imports
step("lore_sidecar imported (pygls, lsprotocol, attrs, numpy...)")
from lore_sidecar.store.db import Database
from lore_sidecar.store.records import Records
records = Records(Database(store / "lore.db", writable=False))
counts = records.counts(None)
step("SQLite record open, counted")
from lore_sidecar.store import index_dirs
from lore_sidecar.store.text_index import TextIndex
d = index_dirs.index_dir(store, records.index_epoch())
text = TextIndex(d / "text", writable=False)
for q in ("error", "cache decision", "test failed traceback", "deploy"):
    text.search([*q.split()], kinds=["messages"], project_ids=None, limit=50, conjunctive=False)
step("Tantivy reader open, 4 searches")
from lore_sidecar.llm.embedders import WordLlamaEmbedder
wl = WordLlamaEmbedder(int(sys.argv[3]))
wl.embed(["warm up the static table"])
step("WordLlama loaded")
from lore_sidecar.store.vector_index import VectorIndex
meta = json.loads((d / "vectors" / "vectors.json").read_text()) if (d / "vectors" / "vectors.json").exists() else {}
spaces = {k: (v.rsplit("/", 1)[0], int(v.rsplit("/", 1)[1])) for k, v in meta.get("spaces", {}).items()}
vec = VectorIndex(d / "vectors", spaces=spaces, writable=False)
step(f"usearch indexes loaded ({vec.size()} vectors)")
import onnxruntime  # noqa: F401
step("onnxruntime imported (the files model is loaded on its first file)")
from lore_sidecar.llm.embedders import MiniLMEmbedder
m = MiniLMEmbedder()
m.embed(["warm up the files model with one query"])
step("MiniLM session (only when files are embedded or searched)")
top = []
if tracemalloc.is_tracing():  # where the Python heap is, by allocation site
    for stat in tracemalloc.take_snapshot().statistics("lineno")[:15]:
        frame = stat.traceback[0]
        top.append({"site": f"{frame.filename.rsplit('site-packages/', 1)[-1].rsplit('/lore_sidecar/', 1)[-1]}:{frame.lineno}",
                    "mb": round(stat.size / 2**20, 2), "blocks": stat.count})
print(json.dumps({"counts": counts, "steps": steps, "top": top}))
'''


def components(store: Path, tree: Path | None = None, dim: int = 256) -> dict:
    """RSS after each step untraced (tracemalloc's own bookkeeping would count), and the
    Python heap from a second, traced run. `-P`: the package comes from PYTHONPATH or the
    install, not from the working folder (so a copy of an older tree can be measured)."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree is not None else None
    runs = [json.loads(subprocess.run([sys.executable, "-P", "-c", COMPONENTS, str(store), how, str(dim)], capture_output=True, text=True,
                                      check=True, cwd=str(ROOT), env=env).stdout.strip().splitlines()[-1])
            for how in ("plain", "traced")]
    out = runs[0]
    for s, traced in zip(out["steps"], runs[1]["steps"], strict=True):
        s["python_heap_mb"] = traced["python_heap_mb"]
    out["python_heap_top"] = runs[1]["top"]
    prev = 0.0
    for s in out["steps"]:
        s["added_mb"], prev = round(s["rss_mb"] - prev, 1), s["rss_mb"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--keep", help="fill (or reuse) the store in this folder instead of a temporary one")
    ap.add_argument("--arenas", type=int, help="also measure the sidecar with MALLOC_ARENA_MAX set to this")
    ap.add_argument("--tree", help="the lore_sidecar of this tree (a copy of another commit) for the fill and every measurement")
    ap.add_argument("--compare", help="also measure the sidecar with the lore_sidecar of this tree, alternately with --tree's")
    ap.add_argument("--rounds", type=int, default=1, help="sidecar measurements per tree (alternating with --compare)")
    ap.add_argument("--no-components", action="store_true", help="skip the per-component breakdown")
    ap.add_argument("--followers", type=int, default=0,
                    help="also start this many follower sidecars on the store, and report every sidecar's RSS and PSS")
    ap.add_argument("--copies", action="store_true",
                    help="each sidecar measurement on a fresh copy of the store (a round's own writes, or a newer index "
                         "layout, then never reach the next round)")
    ap.add_argument("--options", default="{}", help="initializationOptions for the fill and every sidecar, as JSON")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "memory.json"))
    args = ap.parse_args()
    tree = Path(args.tree).resolve() if args.tree else None
    if tree is not None:
        sys.path.insert(0, str(tree))  # the fill, in this process, imports that tree's package
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="lore-mem-"))
    store, project = tmp / "store", tmp / "project"
    project.mkdir(parents=True, exist_ok=True)
    try:
        options = json.loads(args.options)
        filled = fill(store, project, args.messages, options)
        def measure(with_tree: Path | None) -> dict:
            if not args.copies:
                return sidecar(store, project, tree=with_tree, followers=args.followers, options=options)
            scratch = tmp / "round-store"
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(store, scratch)
            try:
                return sidecar(scratch, project, tree=with_tree, followers=args.followers, options=options)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

        runs = []
        for _ in range(args.rounds):
            runs.append(measure(tree))
            if args.compare:
                runs.append(measure(Path(args.compare).resolve()))
        result = {"machine": machine(), "load_avg_1m": os.getloadavg()[0], "fill": filled,
                  "sidecar": runs[0], "runs": runs}
        if not args.no_components:
            result["components"] = components(store, tree, options.get("embedderDim", 256))  # read-only: the store is not changed
            if args.compare:
                result["components_compare"] = components(store, Path(args.compare).resolve())
        if args.arenas:  # the same sidecar with glibc's malloc arenas capped (one per thread otherwise)
            result["sidecar_arena_max"] = {"MALLOC_ARENA_MAX": args.arenas,
                                           **sidecar(store, project, {"MALLOC_ARENA_MAX": str(args.arenas)})}
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
