"""How long a sidecar takes to answer `shutdown` and to end after `exit`, by the moment they
arrive: right after `initialize` (the engine still importing and opening), right after the
first answer (the first scan and the dense leg in flight), or once the workspace is indexed.

    python bench/exit_probe.py [init|first|indexed] [--runs N] [--tree PATH [--files N]]

Prints one line per run: seconds to the first answer, to `shutdown`'s reply, and from `exit`
to the process's end. The workspace: tests/conftest.py's small project, or with `--tree` the
synthetic monorepo of bench/monorepo.py (50,000 files), generated at PATH once and kept, so
`first` lands in the first scan's walk of a big tree (a fresh store each run)."""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from tests.conftest import make_workspace  # noqa: E402


def once(when: str, tree: Path | None = None) -> tuple[float, float, float]:
    tmp = Path(tempfile.mkdtemp(prefix="lore-exit-probe-"))
    ws = tree or make_workspace(tmp / "ws")
    c = StdioClient(sidecar_command("--stdio"))
    try:
        t0 = time.monotonic()
        c.initialize(ws, options={"storeDir": str(tmp / "store"), "watch": True, "debounceMs": 50})
        if when != "init":
            c.request("lore/status")
        t1 = time.monotonic()
        while when == "indexed":
            st = c.request("lore/status")
            if st["counts"]["files"] >= 4 and st["indexLagMs"] == 0 and st["vectorLag"] == 0:
                break
            time.sleep(0.1)
        t2 = time.monotonic()
        c.request("shutdown", timeout=120)
        t3 = time.monotonic()
        c.notify("exit")
        c.proc.wait(timeout=120)
        return t1 - t0, t3 - t2, time.monotonic() - t3
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("when", choices=["init", "first", "indexed"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tree", type=Path, help="a big workspace, generated here if missing (bench/monorepo.py)")
    ap.add_argument("--files", type=int, default=50_000, help="files of a generated --tree")
    args = ap.parse_args()
    if args.tree is not None and not args.tree.exists():
        from bench.monorepo import write_monorepo

        write_monorepo(args.tree, args.files)
    if args.tree is not None and args.when == "indexed":
        ap.error("--tree with `indexed` would index the whole tree each run")
    exits = []
    for _ in range(args.runs):
        first, shutdown, exit_ = once(args.when, args.tree)
        exits.append(shutdown + exit_)
        print(f"{args.when}: first answer {first:.2f} s, shutdown {shutdown:.2f} s, exit {exit_:.2f} s", flush=True)
    print(f"median shutdown+exit {statistics.median(exits):.2f} s")


if __name__ == "__main__":
    main()
