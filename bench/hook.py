"""The `UserPromptSubmit` hook round trip: host JSON on stdin in, host JSON out, as a host
runs it (a new `lore-sidecar hook` process per prompt).

Warm: the hook daemon is up (the first call starts it; the benchmark waits for it), the
store holds `--messages` earlier messages, and each call recalls and records its prompt.
Peers in the same run: the degraded path (`LORE_HOOK_DAEMON=0`: lexical recall in the hook
process itself, no daemon) and a bare `python -c pass` (the floor any Python hook pays).

    python bench/hook.py --calls 200 --messages 2000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, pct, write_result  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from tests.support.harness import stop_hook_daemons, wait_for_daemon  # noqa: E402

TOPICS = ["deploy pipeline", "billing webhook", "cache eviction", "auth tokens", "search ranking", "db migration"]


def seed(store: Path, ws: Path, n: int) -> None:
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    c.initialize(ws, options={"watch": False})
    for start in range(0, n, 500):
        msgs = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
                 "content": f"note {i}: the {TOPICS[i % len(TOPICS)]} needs attention; ticket {i * 7}"}
                for i in range(start, min(n, start + 500))]
        c.request("lore/recordMessages", {"sessionId": f"old-{start // 500}", "messages": msgs})
    c.request("lore/recall", {"query": "deploy"})  # wait until indexed
    c.close()


def timed(cmd: list[str], data: str, env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, input=data, capture_output=True, text=True, env=env, timeout=60)
    return (time.perf_counter() - t0) * 1000, out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--out", default="bench/results/hook.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, ws = Path(tmp) / "store", Path(tmp) / "ws"
        ws.mkdir()
        (ws / ".git").mkdir()
        seed(store, ws, args.messages)
        env = {**os.environ, "LORE_HOOK_IDLE_MS": "60000"}
        cmd = [sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), "hook", "UserPromptSubmit"]

        def event(i: int) -> str:
            return json.dumps({"session_id": f"bench-{i % 5}", "cwd": str(ws), "hook_event_name": "UserPromptSubmit",
                               "prompt": f"what did we decide about the {TOPICS[i % len(TOPICS)]} (ticket {i})?"})

        cold_ms, _ = timed(cmd, event(0), env)  # no daemon: degraded, and starts the daemon
        wait_for_daemon(store, timeout=120)
        warm, degraded, floor, injected = [], [], [], 0
        for i in range(1, args.calls + 1):
            ms, out = timed(cmd, event(i), env)
            warm.append(ms)
            injected += bool(out.strip())
            ms, _ = timed(cmd, event(i), {**env, "LORE_HOOK_DAEMON": "0"})
            degraded.append(ms)
            ms, _ = timed([sys.executable, "-c", "pass"], "", env)
            floor.append(ms)
        stop_hook_daemons(store)

    def summary(xs: list[float]) -> dict:
        return {"n": len(xs), "p50_ms": round(pct(xs, 50), 1), "p95_ms": round(pct(xs, 95), 1), "max_ms": round(max(xs), 1)}

    result = {"machine": machine(), "messages_in_store": args.messages, "first_call_no_daemon_ms": round(cold_ms, 1),
              "warm_daemon": summary(warm), "peer_degraded_no_daemon": summary(degraded),
              "peer_python_startup": summary(floor), "calls_with_context": injected}
    write_result(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
