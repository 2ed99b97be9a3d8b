"""Codebase questions on this repository with a fake model of fixed latency: what lore-sidecar
adds around the model, and how much of the window the prompt cache reads.

    python bench/ask.py                 # 20 questions, 100 ms per model turn
    python bench/ask.py --latency-ms 300

A real sidecar over stdio answers 20 questions about identifiers of this repository through
the scripted agent of tests/support/ask_agent.py (Grep for the name, Read the file, record a
fact, answer), talking to a fake Anthropic server that sleeps `--latency-ms` per turn.

Reported:
- tool latency: every tool call's time as the sidecar measured it (`trailer.toolMs` per
  question) and, in the same run, Grep over the repository through the bounded tool runner
  vs plain `grep -rEnI` with the same arguments (the peer: what the bounds cost);
- overhead per question excluding the model: client wall time minus the fake's sleeps;
- cache-read share of input tokens for questions 2-20, by the prompt-cache simulator over
  the request bodies the fake recorded (engine/context/cache_sim.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine, pct, steps, write_result  # noqa: E402
from lore_sidecar.client import StdioClient, sidecar_command  # noqa: E402
from lore_sidecar.engine.ask.tools import SKIP_DIRS, Tools  # noqa: E402
from lore_sidecar.engine.context.cache_sim import CacheSim  # noqa: E402
from lore_sidecar.engine.jail import Jail  # noqa: E402
from tests.support import ask_agent  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic  # noqa: E402

NAMES = ["canonical_root", "read_node", "revalidate", "frozen_text", "load_settings", "redact", "check_path_text",
         "price_of", "cut_points", "outline", "status_of", "recall_block", "write_atomic", "fact_id", "compact",
         "marked", "chat_messages", "tool_message", "iso_utc", "default_store_dir"]


def grep_peer(root: Path, pattern: str) -> float:
    args = ["grep", "-rEnI", "--color=never", "-C0", "-m", "50", *[f"--exclude-dir={d}" for d in sorted(SKIP_DIRS)],
            "--include=*.py", "-e", pattern, "--", "."]
    t = time.perf_counter()
    subprocess.run(args, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-ms", type=int, default=100)
    ap.add_argument("--questions", type=int, default=len(NAMES))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "ask.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-ask-"))

    def responder(body):
        time.sleep(args.latency_ms / 1000)
        return ask_agent.anthropic_responder(body)

    walls, tool_ms, overhead, answered = [], [], [], 0
    try:
        with FakeAnthropic(responder) as fake:
            env = {**os.environ, "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": fake.url}
            c = StdioClient(sidecar_command(), env=env)
            c.initialize(ROOT, options={"storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": False,
                                        "distiller": "off"})
            starts = []
            try:
                for name in steps(NAMES[: args.questions], "questions"):
                    starts.append(len(fake.bodies))
                    before = len(fake.bodies)
                    t = time.perf_counter()
                    r = c.request("lore/ask", {"question": f"Where is `{name}` defined?"}, timeout=120)
                    wall = (time.perf_counter() - t) * 1000
                    turns = len(fake.bodies) - before
                    walls.append(wall)
                    tool_ms.append(r["trailer"]["toolMs"])
                    overhead.append(wall - turns * args.latency_ms)
                    answered += f"`{name}` is defined in" in r["answer"]
                stats = c.request("lore/askStats")
            finally:
                c.close()
            sim, read, total = CacheSim(), 0, 0
            for n, body in enumerate(fake.bodies):
                blocks, marks = ask_agent.cache_blocks(body)
                o = sim.request(blocks, marks, at=float(n))
                if n >= starts[1]:
                    read += o.read
                    total += o.read + o.write + o.uncached
        tools = Tools(root=ROOT, jail=Jail.of([ROOT]))
        ours, peer = [], []
        for name in NAMES:
            for first in (0, 1):  # alternate which runs first
                pattern = rf"\b{name}\b"
                if first:
                    peer.append(grep_peer(ROOT, pattern))
                t = time.perf_counter()
                tools.grep(pattern, "*.py")
                ours.append((time.perf_counter() - t) * 1000)
                if not first:
                    peer.append(grep_peer(ROOT, pattern))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "machine": machine(), "questions": min(args.questions, len(NAMES)), "answered": answered, "model_latency_ms": args.latency_ms,
        "model_requests": len(fake.bodies),
        "tool_ms_per_question": {"p50": round(statistics.median(tool_ms), 1), "p95": round(pct(tool_ms, 95), 1)},
        "grep_repo_ms": {"p50": round(statistics.median(ours), 2), "p95": round(pct(ours, 95), 2)},
        "grep_repo_peer_ms": {"p50": round(statistics.median(peer), 2), "p95": round(pct(peer, 95), 2)},
        "grep_ratio_p50": round(statistics.median(ours) / statistics.median(peer), 2),
        "wall_ms_per_question": {"p50": round(statistics.median(walls), 1), "p95": round(pct(walls, 95), 1)},
        "overhead_ms_per_question": {"p50": round(statistics.median(overhead), 1), "p95": round(pct(overhead, 95), 1)},
        "cache_read_share_q2_20": round(read / total, 4),
        "window_fill_after": stats["windowFill"], "ledger_facts": stats["ledgerFacts"],
    }
    write_result(args.out, result)
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
