"""A first workspace scan until searchable by its words, with FTS5 on the same files in the
same run, in wall time *and* CPU seconds (this process: the scan's thread, the text leg,
Tantivy's threads; the preparation workers; FTS5). On a shared machine the wall ratio
follows the load; the CPU figures say what the code costs. `-v` prints when each batch was
written, read back, added to Tantivy and committed, thread by thread.

    python bench/scan_timeline.py source 2000 [-v]
    python bench/scan_timeline.py notes 20000 [--threads]   # also the CPU of each thread
    TREE=/other/checkout python bench/scan_timeline.py notes 20000   # that tree's code
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("TREE", str(Path(__file__).resolve().parents[1])))

from bench.core import SEED, _fts5_folder, _write_tree, engine  # noqa: E402
from bench.corpus import note_file, source_file  # noqa: E402
from lore_sidecar.engine.indexing import dense, indexer  # noqa: E402
from lore_sidecar.store import file_rows, text_index  # noqa: E402

EVENTS: list[tuple[float, str, str]] = []
START = [0.0]


def _traced(cls, name: str) -> None:
    f = getattr(cls, name)

    def call(*a, **k):
        EVENTS.append((time.perf_counter() - START[0], threading.current_thread().name, name + " >"))
        try:
            return f(*a, **k)
        finally:
            EVENTS.append((time.perf_counter() - START[0], threading.current_thread().name, name + " <"))

    setattr(cls, name, call)


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, summed by name (Linux /proc; a
    Python thread by its Python name). Threads that have ended are not counted."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            name = names.get(int(task.name)) or (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    kind, n = sys.argv[1], int(sys.argv[2])
    for cls, name in ((text_index.TextIndex, "commit"), (text_index.TextIndex, "upsert"),
                      (file_rows.FileRows, "replace_files"), (indexer.Indexer, "_load"), (dense.DenseWorker, "_embed")):
        _traced(cls, name)
    tmp = Path(tempfile.mkdtemp(prefix="lore-timeline-"))
    try:
        ws = tmp / "ws"
        _write_tree(ws, n, source_file if kind == "source" else note_file, SEED + (2 if kind == "source" else 3))
        e = engine(tmp / "store", [str(ws)])
        try:
            time.sleep(0.5)  # the engine's start-up work out of the way
            threads0 = _thread_cpu()
            START[0], cpu0, kids0 = time.perf_counter(), time.process_time(), _children_cpu()
            e.index.scan()
            EVENTS.append((time.perf_counter() - START[0], "MainThread", "scan returned"))
            e.view.indexer.wait_for(e.records.outbox_head(), 3600)
            wall, cpu, kids = time.perf_counter() - START[0], time.process_time() - cpu0, _children_cpu() - kids0
            threads = {k: v - threads0.get(k, 0.0) for k, v in _thread_cpu().items()}
            chunks = e.records.counts(None)["chunks"]
        finally:
            e.close()
        # FTS5 after the engine is closed: its dense leg starts embedding once the words are
        # in, and in this process it took cores (and CPU seconds) from FTS5's run.
        fts_cpu = time.process_time()
        fts = _fts5_folder(ws, tmp / "fts.db")
        fts_cpu = time.process_time() - fts_cpu
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "-v" in sys.argv:
        for at, thread, what in EVENTS:
            print(f"{at:7.3f} {thread:14s} {what}")
    if "--threads" in sys.argv:
        print("cpu by thread:", ", ".join(f"{k} {v:.2f}s" for k, v in sorted(threads.items(), key=lambda x: -x[1]) if v >= 0.01))
    print(f"{kind} {n}: wall {wall:.3f}s fts5 {fts:.3f}s ratio {fts / wall:.3f} | cpu main {cpu:.2f}s workers {kids:.2f}s"
          f" fts5 {fts_cpu:.2f}s cpu-ratio {fts_cpu / (cpu + kids):.3f} | chunks {chunks} load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
