"""MCP tool round trips against the same calls over LSP, same store, same run.

    python bench/mcp.py                       # 100,000 messages, 300 queries
    python bench/mcp.py --messages 2000 --queries 20

A store of N messages is built in-process; then one sidecar holds the writer role and
followers answer: an LSP sidecar (`lore/recall`, `lore/getNode` through the strict stdio
client) and two `lore-sidecar mcp` servers (`lore_recall`, `lore_get_node`): one driven by a
lean line client (the counterpart of the LSP client: the faces compared like for like), one
by the official MCP SDK client (what a Python agent pays, client library included). Each
query goes to every face, the order rotating; the lead opened is the top
hit, with its query id (so `lore_get_node` also counts the use, as an agent's would); both
faces name their runtime, so both log the leads they show (usage accounting), as agents do.
Round trips are client-side wall time: framing, validation, the engine and the reply.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run as a script, this file's folder leads sys.path, and this file would shadow the `mcp` SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, steps, write_result  # noqa: E402
from bench.corpus import message, queries  # noqa: E402
from bench.mcp_session import LineClient, mcp_session  # noqa: E402
from lore_sidecar import __version__  # noqa: E402
from lore_sidecar.app import open_engine  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.settings import load_settings  # noqa: E402

SEED = 20261201
OPTIONS = {"watch": False, "indexWorkspace": False, "distiller": "off"}


def build_store(store: Path, project: Path, n: int) -> float:
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"), init_options={"storeDir": str(store), **OPTIONS})
    e = open_engine(settings, [str(project)])
    rng = random.Random(SEED)
    t0 = time.perf_counter()
    for start in range(0, n, 1000):
        msgs = []
        for i in range(start, min(n, start + 1000)):
            role, text = message(rng, i)
            msgs.append({"role": role, "content": text, "msg_id": f"m{i}", "created_at": None, "tool_name": None,
                         "tool_call_id": None})
        e.capture.record_messages(project=str(project), session_id=f"s{start // 200}", harness="bench", messages=msgs)
    e.index.wait(3600)
    took = time.perf_counter() - t0
    e.close()
    return took


def summary(ms: list[float]) -> dict:
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 2), "p95_ms": round(pct(ms, 95), 2)}


async def measure(store: Path, project: Path, qs: list[str]) -> dict:
    env = {"LORE_DISTILLER": "off", "LORE_WATCH": "false", "LORE_INDEX_WORKSPACE": "false"}
    writer = StdioClient(sidecar_command("--store-dir", str(store)))
    writer.initialize(project, options=OPTIONS)
    lsp = StdioClient(sidecar_command("--store-dir", str(store)))
    lsp.initialize(project, options=OPTIONS)
    lean = LineClient(store, project, "--harness", "bench", env=env)
    roles = {"writer": writer.request("lore/status")["role"], "lsp": lsp.request("lore/status")["role"]}
    times: dict[str, list[float]] = {f"{face}_{call}": [] for face in ("lsp", "mcp", "mcp_sdk")
                                     for call in ("recall", "get_node")}

    def timed(key: str, fn, *args):
        t = time.perf_counter()
        out = fn(*args)
        times[key].append((time.perf_counter() - t) * 1000)
        return out

    def via_lsp(q: str) -> None:
        r = timed("lsp_recall", lsp.request, "lore/recall", {"query": q, "limit": 10, "harness": "bench"})
        if r["hits"]:
            timed("lsp_get_node", lsp.request, "lore/getNode",
                  {"uri": r["hits"][0]["uri"], "queryId": r["queryId"], "harness": "bench"})

    def lead_of(text: str) -> dict | None:
        lead = re.search(r"^1\. (\S+) \[", text, re.M)
        return {"uri": lead.group(1), "query_id": re.search(r'query_id="([^"]+)"', text).group(1)} if lead else None

    def via_lean(q: str) -> None:
        lead = lead_of(timed("mcp_recall", lean.call, "lore_recall", {"query": q, "limit": 10}))
        if lead:
            timed("mcp_get_node", lean.call, "lore_get_node", lead)

    try:
        async with mcp_session(store, project, "--harness", "bench", env=env) as sdk:
            async def via_sdk(q: str) -> None:
                t = time.perf_counter()
                r = await sdk.call_tool("lore_recall", {"query": q, "limit": 10})
                times["mcp_sdk_recall"].append((time.perf_counter() - t) * 1000)
                lead = lead_of(r.content[0].text)
                if lead:
                    t = time.perf_counter()
                    await sdk.call_tool("lore_get_node", lead)
                    times["mcp_sdk_get_node"].append((time.perf_counter() - t) * 1000)

            for q in qs[:10]:  # warm every face
                lsp.request("lore/recall", {"query": q, "limit": 10})
                lean.call("lore_recall", {"query": q, "limit": 10})
                await sdk.call_tool("lore_recall", {"query": q, "limit": 10})
            for k in times:
                times[k].clear()
            for i, q in enumerate(steps(qs, "round trips")):  # each query to every face, the order rotating
                order = [via_lsp, via_lean, None][i % 3:] + [via_lsp, via_lean, None][: i % 3]
                for face in order:
                    if face is None:
                        await via_sdk(q)
                    else:
                        face(q)
    finally:
        lean.close()
        lsp.close()
        writer.close()
    out: dict = {k: summary(v) for k, v in times.items() if v}
    for face in ("mcp", "mcp_sdk"):
        for call in ("recall", "get_node"):
            a, b = out.get(f"{face}_{call}"), out.get(f"lsp_{call}")
            if a and b:
                out[f"{face}_over_lsp_{call}"] = {"p50": round(a["p50_ms"] / b["p50_ms"], 2),
                                                  "p95": round(a["p95_ms"] / b["p95_ms"], 2)}
    out["roles"] = {**roles, "mcp": "follower (the writer above holds the store)"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "mcp.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-mcp-"))
    try:
        project = tmp / "project"
        project.mkdir()
        built = build_store(tmp / "store", project, args.messages)
        qs = queries(random.Random(SEED + 1), args.queries)
        result = {"machine": machine(), "version": __version__, "messages": args.messages,
                  "store_built_s": round(built, 1), **asyncio.run(measure(tmp / "store", project, qs))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
