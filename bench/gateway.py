"""What the gateway adds to a model call: the same requests sent straight to a fake model
server on loopback and through `lore-sidecar gateway` to it, alternating, in one run.

    python bench/gateway.py                   # a 120-call session, bodies growing to ~60k tokens
    python bench/gateway.py --calls 20

Each call is a streaming Anthropic Messages request of a growing agent session (tool calls
with file-sized results); time is client wall time until the whole streamed answer is read.
Overhead = through the gateway minus direct, per call (paired).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, steps, write_result  # noqa: E402
from tests.support.fake_models import FakeModels  # noqa: E402


def session(calls: int) -> list[dict]:
    messages: list[dict] = []
    bodies = []
    for k in range(calls):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"step {k}: read src/mod_{k}.py"}]}
                        if k == 0 else {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k - 1}",
                                                                      "content": "\n".join(f"line {i} of module {k}"
                                                                                           for i in range(120))}]})
        bodies.append({"model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": True,
                       "metadata": {"user_id": json.dumps({"session_id": "bench-gateway"})},
                       "system": [{"type": "text", "text": "You are a coding agent. " * 400}],
                       "messages": [dict(m) for m in messages]})
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "Read",
                                                           "input": {"path": f"src/mod_{k}.py"}}]})
    return bodies


def timed_post(url: str, body: dict) -> float:
    req = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "x-api-key": "sk-bench"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
    return (time.perf_counter() - t) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=120)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "gateway.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-gateway-"))
    direct, through = [], []
    try:
        with FakeModels(lambda api, body: "ok") as fake:
            proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(tmp / "store"),
                                     "--workspace", str(tmp), "--upstream", fake.url], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, env={**os.environ, "LORE_DISTILLER": "off"})
            try:
                assert proc.stdout is not None
                url = proc.stdout.readline().strip()
                bodies = session(args.calls)
                timed_post(url, bodies[0])  # opens the store
                for i, body in enumerate(steps(bodies, "calls")):
                    if i % 2:  # which goes first alternates
                        d = timed_post(fake.url, body)
                        g = timed_post(url, body)
                    else:
                        g = timed_post(url, body)
                        d = timed_post(fake.url, body)
                    direct.append(d)
                    through.append(g)
            finally:
                proc.terminate()
                proc.wait(10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    overhead = [g - d for d, g in zip(direct, through, strict=True)]
    result = {"machine": machine(), "calls": len(direct),
              "largest_body_tokens": len(json.dumps(session(args.calls)[-1])) // 4,
              "direct_ms": {"p50": round(statistics.median(direct), 2), "p95": round(pct(direct, 95), 2)},
              "through_gateway_ms": {"p50": round(statistics.median(through), 2), "p95": round(pct(through, 95), 2)},
              "overhead_ms": {"p50": round(statistics.median(overhead), 2), "p95": round(pct(overhead, 95), 2)}}
    write_result(args.out, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
