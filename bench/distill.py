"""Conversation memory: does distillation ever make recording wait, and what does it cost?

1. `recordMessages` latency while distillation runs. A real sidecar over stdio records
   messages one request at a time into several sessions while its memory thread distils
   them against a fake Anthropic server on 127.0.0.1 that takes `--llm-ms` per call (a model
   is slow). Peer in the same run: the same workload with `distiller = off`. The runs
   alternate (off, llm, off, llm, ...) so machine noise hits both alike.
2. Pipeline cost per message: record a session with distillation held back, then time
   `lore/distill` over all of it with a fake server that answers at once (render, redact,
   the SDK's HTTP round trip, the write, entities, indexing).

    python bench/distill.py --messages 1500 --rounds 3 --llm-ms 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, pct, write_result  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic  # noqa: E402

SESSIONS = 6


def message(i: int) -> dict:
    if i % 10 == 7:
        body = "\n".join([f"test_{k} PASSED" for k in range(300)] + ["E   KeyError: 'order_id' in src/shop/cart.py:88"])
        return {"id": f"b{i}", "role": "tool", "toolName": "bash", "content": body}
    role = "user" if i % 2 == 0 else "assistant"
    return {"id": f"b{i}", "role": role,
            "content": f"turn {i}: adjusting src/shop/cart.py so checkout totals include tax; we decided to round half-even"}


def responder(delay_s: float):
    def answer(body: dict) -> str:
        if delay_s:
            time.sleep(delay_s)
        system = body["system"][0]["text"]
        if system.startswith("You curate"):
            return '{"nodes": []}'
        return "- observed a KeyError in src/shop/cart.py:88\n- decided to round half-even"
    return answer


def spawn(store: Path, ws: Path, env: dict, **options) -> StdioClient:
    c = StdioClient(sidecar_command(), env=env)
    c.initialize(ws, options={"storeDir": str(store), "watch": False, **options})
    c.request("lore/status")
    return c


def record_run(base: Path, n: int, mode: str, fake: FakeAnthropic) -> dict:
    ws = base / "ws"
    ws.mkdir(parents=True)
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-bench-fake", "ANTHROPIC_BASE_URL": fake.url}
    opts = {"distiller": mode, "distillIdleMs": 50, "distillMinMessages": 5, "distillMaxMessages": 10, "curateEvery": 3}
    c = spawn(base / "store", ws, env, **opts)
    try:
        # Warm-up, the same for both modes: the first distillation pays one-time costs (the
        # SDK import, the first index commits of the new tiers) that are not steady state.
        c.request("lore/recordMessages", {"sessionId": "warm", "messages": [
            {**message(i), "id": f"w{i}"} for i in range(20)]})
        if mode != "off":
            c.request("lore/distill", {"sessionId": "warm"})
        time.sleep(0.5)
        lat = []
        for i in range(n):
            params = {"sessionId": f"s{i % SESSIONS}", "messages": [message(i)]}
            t0 = time.perf_counter()
            c.request("lore/recordMessages", params)
            lat.append((time.perf_counter() - t0) * 1000)
        st = c.request("lore/status")
    finally:
        c.close()
    return {"lat": lat, "distillations": st["counts"]["distillations"], "llm_calls": st["distiller"]["usage"]["calls"]}


def pipeline_cost(base: Path, n: int) -> dict:
    ws = base / "ws"
    ws.mkdir(parents=True)
    with FakeAnthropic(responder(0.0)) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-bench-fake", "ANTHROPIC_BASE_URL": fake.url}
        c = spawn(base / "store", ws, env, distillIdleMs=3_600_000, distillMaxMessages=10_000)
        try:
            for start in range(0, n, 50):
                c.request("lore/recordMessages", {"sessionId": "one", "messages": [message(i) for i in range(start, min(n, start + 50))]})
            t0 = time.perf_counter()
            out = c.request("lore/distill", {}, timeout=600)
            took = (time.perf_counter() - t0) * 1000
            st = c.request("lore/status")
        finally:
            c.close()
        return {"messages": n, "took_ms": round(took, 1), "ms_per_message": round(took / n, 3),
                "created": len(out["created"]), "llm_calls": len(fake.bodies),
                "distillations": st["counts"]["distillations"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1500, help="recordMessages requests per run")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each mode, alternating")
    ap.add_argument("--llm-ms", type=float, default=300, help="fake model latency per call")
    ap.add_argument("--pipeline-messages", type=int, default=600)
    ap.add_argument("--out", default="bench/results/distill.json")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"off": [], "llm": []}
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(responder(args.llm_ms / 1000)) as fake:
        for r in range(args.rounds):
            for mode in ("off", "llm"):
                runs[mode].append(record_run(Path(tmp) / f"{mode}{r}", args.messages, mode, fake))
                print(f"round {r} {mode}: p95 {pct(runs[mode][-1]['lat'], 95):.2f} ms, "
                      f"{runs[mode][-1]['distillations']} distillations", file=sys.stderr)
        cost = pipeline_cost(Path(tmp) / "pipeline", args.pipeline_messages)

    def summary(mode: str) -> dict:
        lat = [x for run in runs[mode] for x in run["lat"]]
        per_run_p95 = [pct(run["lat"], 95) for run in runs[mode]]
        return {"n": len(lat), "p50_ms": round(pct(lat, 50), 3), "p95_ms": round(pct(lat, 95), 3),
                "p99_ms": round(pct(lat, 99), 3), "median_of_run_p95_ms": round(statistics.median(per_run_p95), 3),
                "distillations": [run["distillations"] for run in runs[mode]],
                "llm_calls": [run["llm_calls"] for run in runs[mode]]}

    off, llm = summary("off"), summary("llm")
    result = {
        "machine": machine(), "messages_per_run": args.messages, "rounds": args.rounds, "llm_ms": args.llm_ms,
        "record_while_distilling": llm, "record_peer_distiller_off": off,
        "p95_ratio": round(llm["p95_ms"] / off["p95_ms"], 3),
        "median_run_p95_ratio": round(llm["median_of_run_p95_ms"] / off["median_of_run_p95_ms"], 3),
        "pipeline": cost,
    }
    write_result(args.out, result)
    print(f"recordMessages p95 while distilling {llm['p95_ms']} ms vs distiller off {off['p95_ms']} ms "
          f"(ratio {result['p95_ratio']}); pipeline {cost['ms_per_message']} ms/message")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
