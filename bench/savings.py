"""The savings ledger against the cache simulator: replay recorded sessions exactly as
bench/context.py does (over stdio, the simulated usage fed back with `lore/recordUsage`), keep
each session's store, and compare what `lore/status.savings` would say with the simulator's
own figures. "through lore" must match to the cent (every call is reported, and reported
figures are the usage fed back); "L0" is the ledger's estimate of the harness's own bodies
against the simulator's L0 replay of them.

    python bench/savings.py [--sessions 4d5611e5,ae4a77f8]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import context as bc  # noqa: E402
from lore_sidecar.engine.context.savings import Savings  # noqa: E402
from lore_sidecar.store.context_ledger import store_ledger  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(bc.DATA))
    ap.add_argument("--sessions", help="comma-separated names (default: all)")
    args = ap.parse_args()
    chosen = bc.sessions(Path(args.data))
    if args.sessions:
        chosen = [s for s in chosen if s.name in args.sessions.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-savings-"))
    try:
        for s in chosen:
            store = tmp / s.name / "store"
            row = bc.replay(s, store, 0)
            t = Savings(store_ledger(store)).report(None)["total"]
            print(json.dumps({"session": s.name, "calls": t["calls"], "source": t["source"],
                              "sim_l0_usd": row["cost_l0_usd"], "ledger_l0_usd": round(t["l0Usd"], 2),
                              "sim_lore_usd": row["cost_lore_usd"], "ledger_usd": round(t["usd"], 2),
                              "sim_ratio": row["ratio"], "ledger_ratio": t["ratio"],
                              "cache_hit_ratio": t["cacheHitRatio"], "busts": t["bustReasons"]}), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
