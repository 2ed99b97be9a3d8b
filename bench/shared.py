"""A team's shared record on a real PostgreSQL, measured against one machine's SQLite store in
the same run.

    python bench/shared.py                    # 1, 3 and 6 sidecars; 100 creates; a 100k join
    python bench/shared.py --creates 30 --join 5000

- write throughput: every sidecar creates nodes as fast as it is answered, all at once;
  nodes created per second in all, against one sidecar on its own store (no sharedUrl);
- replication lag: a node created on one machine until recall on each of the others finds
  it (polled every 10 ms), p50/p95 over the creates;
- a fresh machine joining a record of N shared items (written straight into the log): time
  until recall finds the last one.
Each sidecar has its own store folder ("machine"); the PostgreSQL is a throwaway cluster on
127.0.0.1 (tests/support/postgres.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, write_result  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from tests.support.postgres import Cluster  # noqa: E402


def word(k: int) -> str:
    """A word no other node has: letters only (the analyzer splits digits off)."""
    out = ""
    k += 26 * 26
    while k:
        k, r = divmod(k, 26)
        out = chr(97 + r) + out
    return "zq" + out


def sidecars(tmp: Path, n: int, url: str | None, team: str) -> list[StdioClient]:
    out = [StdioClient(sidecar_command()) for _ in range(n)]  # started side by side, then initialized
    for i, c in enumerate(out):
        ws = tmp / team / f"m{i}" / "shop"
        (ws / ".git").mkdir(parents=True)
        options = {"storeDir": str(tmp / team / f"m{i}" / "store"), "watch": False, "indexWorkspace": False,
                   "distiller": "off", **({"sharedUrl": url, "sharedTeam": team} if url else {})}
        c.initialize(ws, options=options)
    return out


def throughput(cs: list[StdioClient], per: int, tag: str) -> float:
    def work(i: int, c: StdioClient) -> None:
        for k in range(per):
            c.request("lore/createNode", {"uri": f"project://shop/pattern/{tag}-{i}-{k}", "category": "pattern",
                                          "content": f"Throughput node {k} from machine {i}"})

    threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(cs)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return len(cs) * per / (time.perf_counter() - t)


def lags(cs: list[StdioClient], creates: int) -> list[float]:
    out = []
    for k in range(creates):
        src = cs[k % len(cs)]
        uri, w = f"project://shop/pattern/lag-{k}", word(k)
        src.request("lore/createNode", {"uri": uri, "category": "pattern", "content": f"Lag probe {w}"})
        t = time.perf_counter()
        for other in cs:
            if other is src:
                continue
            while not any(h["uri"] == uri for h in other.request("lore/recall", {"query": w, "sources": ["knowledge"]})["hits"]):
                if time.perf_counter() - t > 30:
                    raise RuntimeError(f"{uri} did not replicate in 30 s")
                time.sleep(0.01)
        out.append((time.perf_counter() - t) * 1000)
    return out


def join(tmp: Path, url: str, n: int) -> float:
    import psycopg

    from lore_sidecar.shared import schema

    team = "join"
    with psycopg.connect(url, autocommit=True) as conn:
        schema.migrate(conn)
        with conn.cursor() as cur, cur.copy("COPY lore_ops(op_id, team, project, kind, op, origin) FROM STDIN") as cp:
            for k in range(n):
                op = {"opId": f"seed-{k:07d}", "kind": "nodeOp", "method": "createNode", "project": "/elsewhere/shop",
                      "runtime": "seed", "args": {"uri": f"project://shop/pattern/n{k}", "category": "pattern",
                                                  "priority": 3, "content": f"Seeded pattern {k}: {word(k)}"}}
                cp.write_row((op["opId"], team, "shop", "nodeOp", json.dumps(op), "seed"))
    t = time.perf_counter()
    c = sidecars(tmp, 1, url, team)[0]
    try:
        last = word(n - 1)
        while not any(h["uri"].endswith(f"/n{n - 1}") for h in
                      c.request("lore/recall", {"query": last, "sources": ["knowledge"]})["hits"]):
            time.sleep(0.2)
        return time.perf_counter() - t
    finally:
        c.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--creates", type=int, default=100)
    ap.add_argument("--per", type=int, default=100, help="creates per sidecar in the throughput run")
    ap.add_argument("--join", type=int, default=100_000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "shared.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-shared-"))
    result: dict = {"machine": machine(), "runs": []}
    try:
        with Cluster() as pg:
            local = sidecars(tmp, 1, None, "local")
            try:
                result["sqlite_one_machine_creates_per_s"] = round(throughput(local, args.per, "t"), 1)
            finally:
                local[0].close()
            for n in (1, 3, 6):
                cs = sidecars(tmp, n, pg.url, f"team{n}")
                try:
                    run = {"sidecars": n, "creates_per_s": round(throughput(cs, args.per, "t"), 1)}
                    if n > 1:
                        lag = lags(cs, args.creates)
                        run["lag_ms"] = {"p50": round(statistics.median(lag), 1), "p95": round(pct(lag, 95), 1),
                                         "max": round(max(lag), 1), "n": len(lag)}
                    result["runs"].append(run)
                finally:
                    for c in cs:
                        c.close()
            result["join"] = {"items": args.join, "searchable_after_s": round(join(tmp, pg.url, args.join), 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
