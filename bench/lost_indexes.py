"""A store whose indexes were lost, reopened: what the status says at once, and how long an
exit right after the start takes while the rebuild loads its model.

    python bench/lost_indexes.py [--messages 300] [--compare DIR] [--rounds 3]

A store of N messages and a 20-note workspace (embedded once, both models) is copied; each
copy loses its `index/` epochs and is opened by a sidecar over stdio, which is asked
`lore/status` 0.3 s after `initialize` and then told `shutdown` + `exit`. Printed per run:
the close's wall time, `vectorLag` and `indexLagMs` of that status, the exit code and the
1-minute load. With `--compare DIR` the same is done with the lore_sidecar of DIR (a copy of
another commit: `git archive main lore_sidecar | tar -x -C DIR`), alternately.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPTIONS = {"watch": False, "distiller": "off"}


def client(tree: Path, store: Path):
    from lore_sidecar.client import StdioClient, sidecar_command

    return StdioClient(sidecar_command("--store-dir", str(store)), env={**os.environ, "PYTHONPATH": str(tree)})


def seed(root: Path, messages: int) -> tuple[Path, Path]:
    ws = root / "ws"
    (ws / ".git").mkdir(parents=True)
    for i in range(20):
        (ws / f"n{i}.md").write_text(f"# note {i}\nThe parser handles case {i} by looking ahead.\n")
    store = root / "seed"
    c = client(ROOT, store)
    try:
        c.initialize(ws, options=OPTIONS)
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"role": "user", "content": f"message {i} about the parser"} for i in range(messages)]})
        while True:
            st = c.request("lore/status")
            if st["vectorLag"] == 0 and st["indexLagMs"] == 0 and st["counts"]["chunks"]:
                return ws, store
            time.sleep(0.2)
    finally:
        c.close()


def once(tree: Path, seeded: Path, ws: Path, copy: Path) -> tuple[float, int, int, int, float]:
    shutil.copytree(seeded, copy)
    for epoch in (copy / "index").iterdir():
        if epoch.is_dir():
            shutil.rmtree(epoch)
    c = client(tree, copy)
    c.initialize(ws, options={**OPTIONS, "indexWorkspace": False})
    time.sleep(0.3)
    st = c.request("lore/status")
    t0 = time.monotonic()
    code = c.close(timeout=60)
    return round(time.monotonic() - t0, 2), st["vectorLag"], st["indexLagMs"], code, round(os.getloadavg()[0], 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=300)
    ap.add_argument("--compare", help="also this tree's lore_sidecar, alternately")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    trees = {"this": ROOT, **({"compare": Path(args.compare)} if args.compare else {})}
    with tempfile.TemporaryDirectory(prefix="lost-indexes-") as tmp:
        ws, seeded = seed(Path(tmp), args.messages)
        runs: dict[str, list] = {name: [] for name in trees}
        for r in range(args.rounds):
            for name, tree in trees.items():
                runs[name].append(once(tree, seeded, ws, Path(tmp) / f"{name}-{r}"))
                print(name, "close s, vectorLag, indexLagMs, exit code, load:", runs[name][-1], flush=True)
        for name, rows in runs.items():
            print(f"{name}: close median {statistics.median(r[0] for r in rows):.2f} s, "
                  f"vectorLag at the first status {[r[1] for r in rows]}, load {[r[4] for r in rows]}")


if __name__ == "__main__":
    main()
