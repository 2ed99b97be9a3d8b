"""Backup and restore of a store holding an indexed workspace: restore wall time (the
`lore-sidecar restore` process, start to exit) and recall before vs after (same hits, same
order) for a set of queries; the vector lag right after the restore says nothing was
re-embedded.

    python bench/backup.py [--files 2000] [--functions 1] [--queries 40] [--out bench/results/backup.json]

`--functions`: functions per file (the corpus's own files hold 3-12, ~8.6 chunks a file; one
function makes ~1.5 chunks a file, so the store can be fully embedded by MiniLM on a busy
two-core machine before the backup is taken — restore time does not depend on it, since
nothing is re-embedded).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, write_result  # noqa: E402
from bench.corpus import queries, source_file  # noqa: E402
from lore_sidecar import backups  # noqa: E402
from lore_sidecar.app import open_engine  # noqa: E402
from lore_sidecar.settings import load_settings  # noqa: E402

SEED = 20261203


def settings_for(store: Path, **opts):
    return load_settings(env={}, user_file=Path("/nonexistent"),
                         init_options={"storeDir": str(store), "distiller": "off", **opts})[0]


def recall_all(e, qs: list[str]) -> list[list[tuple[str, float]]]:
    return [[(h.uri, round(h.score, 6)) for h in e.recall(q, scope="all", sources=["files"], limit=10).hits] for q in qs]


def cut(text: str, functions: int) -> str:
    """The module's head and its first `functions` functions."""
    parts = text.split("\ndef ")
    return "\ndef ".join(parts[: functions + 1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--functions", type=int, default=1)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--out", default=str(ROOT / "bench/results/backup.json"))
    args = ap.parse_args()
    rng = random.Random(SEED)
    qs = queries(rng, args.queries)
    with tempfile.TemporaryDirectory(prefix="lore-bench-backup-") as tmp_s:
        tmp = Path(tmp_s)
        ws, store, fresh = tmp / "ws", tmp / "store", tmp / "fresh"
        for i in range(args.files):
            rel, text = source_file(rng, i)
            if args.functions:
                text = cut(text, args.functions)
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        (ws / ".git").mkdir()
        t0 = time.perf_counter()
        e = open_engine(settings_for(store), [str(ws)])
        try:
            e.index.scan()
            e.index.wait(3600)  # every chunk embedded: what a user's store looks like
            indexed_s = time.perf_counter() - t0
            counts = e.records.counts(None)
            before = recall_all(e, qs)
        finally:
            e.close()
        t0 = time.perf_counter()
        made = backups.backup(settings_for(store), tmp / "backups")
        backup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "lore_sidecar", "restore", made["path"], "--store-dir", str(fresh),
                            "--json"], cwd=ws, capture_output=True, text=True)
        restore_s = time.perf_counter() - t0
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        restored = json.loads(r.stdout)
        e = open_engine(settings_for(fresh, watch=False, indexWorkspace=False), [str(ws)])
        try:
            lag = e.status()["vectorLag"]
            after = recall_all(e, qs)
        finally:
            e.close()
    same = sum(a == b for a, b in zip(before, after, strict=True))
    result = {"machine": machine(), "functions_per_file": args.functions or "3-12", "files": counts["files"], "chunks": counts["chunks"], "indexed_s": round(indexed_s, 1),
              "backup_s": round(backup_s, 2), "backup_has_indexes": made["index"] is not None,
              "restore_wall_s": round(restore_s, 2), "restore_indexes": restored["indexes"],
              "vector_lag_after_restore": lag, "queries": len(qs), "recall_identical": same,
              "hits_compared": sum(len(b) for b in before)}
    print(json.dumps(result, indent=2))
    write_result(args.out, result)
    return 0 if same == len(qs) else 1


if __name__ == "__main__":
    sys.exit(main())
