"""Many sidecars, one store: failover time and follower freshness, with real processes.

    python bench/failover.py [--sidecars 3] [--kills 50] [--probes 200] [--out bench/results/failover.json]

failover        the writer is SIGKILLed while a follower keeps writing through the protocol;
                measured from just before the signal to the new writer's epoch claim (its
                first commit, read from the record) and to the first spooled write applied.
                Peer, same run: a cold restart (spawn a new sidecar after the death and wait
                for its first commit) - what a tool without take-over would do at best.
follower_sees   a message recorded through the writer, polled for through a follower's
                `lore/recall` until it is returned. Peer, same run: the same on the writer.
"""

from __future__ import annotations

import argparse
import json
import random
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
from bench.fleet import Fleet, record  # noqa: E402
from lore_sidecar import __version__  # noqa: E402

SEED = 20261130



def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(pct(values, 95), 1),
        "p99_ms": round(pct(values, 99), 1),
        "max_ms": round(max(values), 1),
    }


def workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("# bench\n\nA small project so every sidecar has a workspace.\n")
    (ws / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    return ws


def bench_failover(tmp: Path, sidecars: int, kills: int) -> dict:
    rng = random.Random(SEED)
    fleet = Fleet(tmp / "failover-store", workspace(tmp), watch=False)
    to_claim: list[float] = []
    to_applied: list[float] = []
    stop = threading.Event()
    n_background = [0]

    def background(client) -> None:  # steady write load through whichever member it is
        i = 0
        while not stop.is_set() and client.proc.poll() is None:
            try:
                record(client, "load", [f"{client.proc.pid}-{i}"], "background load")
            except Exception:
                return
            n_background[0] += 1
            i += 1
            time.sleep(0.02)

    try:
        for _ in range(sidecars):
            threading.Thread(target=background, args=(fleet.spawn(),), daemon=True).start()
        for k in range(kills):
            time.sleep(rng.uniform(0.1, 0.4))
            epoch = fleet.current_epoch()
            victim = fleet.by_pid(fleet.writer_pid())
            probe = next(c for c in fleet.live() if c is not victim)
            t_kill = fleet.kill(victim)
            r = record(probe, "probe", [f"after-kill-{k}"], "written right after the writer died")
            t_applied = time.time_ns()
            claimed = fleet.wait_for_epoch(epoch)
            to_claim.append((claimed["claimed_ns"] - t_kill) / 1e6)
            if r["applied"]:
                to_applied.append((t_applied - t_kill) / 1e6)
            threading.Thread(target=background, args=(fleet.spawn(),), daemon=True).start()
    finally:
        stop.set()
        fleet.close()

    # Peer: no take-over, a new process is started once the old one is found dead.
    cold: list[float] = []
    peer = Fleet(tmp / "cold-store", workspace(tmp), watch=False, indexWorkspace=False)
    try:
        peer.spawn()
        for _ in range(min(kills, 10)):
            epoch = peer.current_epoch()
            t_kill = peer.kill(peer.live()[0])
            peer.spawn()
            cold.append((peer.wait_for_epoch(epoch)["claimed_ns"] - t_kill) / 1e6)
    finally:
        peer.close()
    return {
        "sidecars": sidecars,
        "kills": kills,
        "background_writes": n_background[0],
        "death_to_first_commit": summary(to_claim),
        "death_to_spooled_write_applied": summary(to_applied),
        "peer_cold_restart_to_first_commit": summary(cold),
        "ratio_p50_vs_cold_restart": round(statistics.median(to_claim) / statistics.median(cold), 3),
    }


def bench_follower_sees(tmp: Path, probes: int) -> dict:
    fleet = Fleet(tmp / "fresh-store", workspace(tmp), watch=False)
    follower_ms: list[float] = []
    writer_ms: list[float] = []
    try:
        writer = fleet.spawn()
        follower = fleet.spawn()

        def seen_after(reader, token: str, t0: float) -> float:
            while True:
                hits = reader.request("lore/recall", {"query": token, "lexicalOnly": True, "sources": ["messages"]})["hits"]
                if hits:
                    return (time.perf_counter() - t0) * 1000
                time.sleep(0.002)

        for i in range(probes):
            reader, sink = (follower, follower_ms) if i % 2 == 0 else (writer, writer_ms)
            token = f"probe{i}"
            t0 = time.perf_counter()
            record(writer, "fresh", [token], "")
            sink.append(seen_after(reader, f"token{token}", t0))
    finally:
        fleet.close()
    return {
        "probes": probes,
        "follower": summary(follower_ms),
        "peer_writer_itself": summary(writer_ms),
        "ratio_p50_follower_vs_writer": round(statistics.median(follower_ms) / statistics.median(writer_ms), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sidecars", type=int, default=3)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "failover.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-failover-"))
    try:
        result = {
            "machine": machine(),
            "lore_sidecar": __version__,
            "failover": bench_failover(tmp, args.sidecars, args.kills),
            "follower_sees_commit": bench_follower_sees(tmp, args.probes),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
