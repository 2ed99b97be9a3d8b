"""Where a first workspace scan spends its CPU, stage by stage (issue 37 item 3).

Each stage runs alone, one after another, on the same generated folder, timed in CPU
seconds of this process (`time.process_time`, so other load on the machine does not count):
walk, read (+ hash), redact, chunk, parts (compound names), SQLite rows (files, chunks,
outbox, the note facts and staleness hooks in their transactions), the text leg (rows read
back, documents built, Tantivy add + commit). The scan in the product overlaps these on two
cores (a worker process prepares; the text leg follows on its own thread); this shows what
each costs, not the wall time.

    python bench/scan_stages.py --kind source --files 2000
    python bench/scan_stages.py --kind notes --files 20000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.core import SEED, _write_tree, engine  # noqa: E402
from bench.corpus import note_file, source_file  # noqa: E402
from lore_sidecar.compound import CompoundParts  # noqa: E402
from lore_sidecar.engine.capture.redact import redact  # noqa: E402
from lore_sidecar.engine.workspace.chunking import chunk_file  # noqa: E402
from lore_sidecar.engine.workspace.walk import read_text, walk  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}

    def add(self, stage: str, t0: float) -> None:
        self.cpu[stage] = self.cpu.get(stage, 0.0) + time.process_time() - t0


def stages(ws: Path, store: Path) -> dict:
    clock = Clock()
    e = engine(store, [str(ws)])
    try:
        indexer, workspace = e.view.indexer, e.view.workspace
        indexer.stop(save=False)  # the text leg is driven below, on this thread
        rules = workspace.rules(str(ws))
        t = time.process_time()
        entries = list(walk(ws, ws, rules, workspace.max_file_bytes))
        clock.add("walk", t)
        t = time.process_time()
        texts = [read_text(x.abs) for x in entries]
        clock.add("read + sha256", t)
        t = time.process_time()
        clean = [redact(x[0]) for x in texts]
        clock.add("redact", t)
        t = time.process_time()
        chunked = [chunk_file(x.rel, text) for x, text in zip(entries, clean, strict=True)]
        clock.add("chunk", t)
        cut = CompoundParts()
        t = time.process_time()
        for chunks in chunked:
            for c in chunks:
                cut.of(c.title, c.text)
        clock.add("parts", t)
        # The rows (and hooks) as the scan writes them: the scan's own path, minus the
        # stages above, is what is left after subtracting them from a whole in-process scan.
        workspace.parallel = False
        t = time.process_time()
        workspace.scan(ws)
        clock.add("whole scan, in process", t)
        t = time.process_time()
        while indexer._drain_once():
            pass
        clock.add("text leg (rows read, docs built, Tantivy add + commit)", t)
        counts = e.records.counts(None)
    finally:
        e.close()
    prep = sum(v for k, v in clock.cpu.items() if k in ("walk", "read + sha256", "redact", "chunk", "parts"))
    clock.cpu["SQLite rows + hooks (whole scan - the stages above)"] = clock.cpu["whole scan, in process"] - prep
    return {"files": counts["files"], "chunks": counts["chunks"],
            "cpu_s": {k: round(v, 3) for k, v in clock.cpu.items()},
            "us_per_file": {k: round(v * 1e6 / max(1, counts["files"])) for k, v in clock.cpu.items()},
            "load": round(os.getloadavg()[0], 1)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=("source", "notes"), default="source")
    ap.add_argument("--files", type=int, default=2000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-stages-"))
    try:
        ws = tmp / "ws"
        _write_tree(ws, args.files, source_file if args.kind == "source" else note_file,
                    SEED + (2 if args.kind == "source" else 3))
        print(json.dumps(stages(ws, tmp / "store"), indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
