"""The benchmarks run end to end on tiny inputs, so they cannot rot unnoticed."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def run_bench(tmp_path, script: str, *args: str) -> dict:
    """Run bench/<script>.py with `args`; its JSON result."""
    out = tmp_path / f"{script}.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), *args, "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def test_core_benchmark_smoke(tmp_path):
    # One timed start of each kind (source, compiled) runs every line of the initialize
    # bench; its default seven were 14 sidecar starts, 50 of this test's 65 s.
    result = run_bench(tmp_path, "core", "--sizes", "300", "--queries", "10", "--files", "10", "--notes", "20", "--dense-files", "5",
                       "--init-runs", "1")
    size = result["messages"]["sizes"][0]
    assert size["messages"] == 300 and size["recall_hybrid_p50_ms"] > 0 and size["fts5_p50_ms"] > 0
    assert result["workspace"]["files"] == 10 and result["initialize"]["runs"] == 1
    assert result["initialize"]["p50_ms"] > 0 and result["initialize"]["compiled_p50_ms"] > 0
    assert result["workspace_dense"]["files"] == 5 and result["workspace_dense"]["chunks_per_s_dense"] > 0
    assert result["notes"]["notes"] == 20 and result["notes"]["fts5_wall_s"] >= 0
    sidecar = result["messages"]["sidecar"]  # a real sidecar on the store the messages went into
    assert sidecar["messages"] == 300 and sidecar["rss_mb"] > 0 and sidecar["recall_p50_ms"] > 0


def test_memory_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "memory", "--messages", "300")
    assert result["fill"]["messages"] == 300 and result["components"]["counts"]["messages"] == 300
    sidecar = result["sidecar"]  # a real sidecar on the filled store, its smaps grouped
    assert sidecar["rss_mb"] > 0 and abs(sum(sidecar["smaps_mb"].values()) - sidecar["rss_mb"]) < 0.1 * sidecar["rss_mb"]
    assert abs(sidecar["anon_mb"] + sidecar["file_mb"] - sidecar["rss_mb"]) < 0.1 * sidecar["rss_mb"]
    assert 0 < sidecar["recall_p50_ms"] <= sidecar["recall_p95_ms"]
    steps = [s["step"] for s in result["components"]["steps"]]
    assert steps[0] == "interpreter" and any(s.startswith("usearch indexes loaded") for s in steps)


def test_failover_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "failover", "--kills", "2", "--probes", "6")
    assert result["failover"]["death_to_first_commit"]["n"] == 2
    assert result["failover"]["peer_cold_restart_to_first_commit"]["n"] == 2
    assert result["follower_sees_commit"]["follower"]["n"] == 3


def test_facts_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "facts", "--facts", "500", "--queries", "50", "--asserts", "20")
    assert result["replay"]["journalLines"] == result["journal_lines"] == 500
    assert result["fact_rows"] > 400 and result["asserts"]["n"] == 20
    assert result["queries"]["current by subject"]["p50_ms"] > 0


def test_distill_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "distill", "--messages", "60", "--rounds", "1", "--llm-ms", "20",
                       "--pipeline-messages", "40")
    assert result["record_while_distilling"]["n"] == 60 and result["record_peer_distiller_off"]["n"] == 60
    assert result["pipeline"]["distillations"] >= 1 and result["pipeline"]["llm_calls"] >= 1


def test_mcp_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "mcp", "--messages", "300", "--queries", "9")
    assert result["roles"]["writer"] == "writer" and result["roles"]["lsp"] == "follower"
    for face in ("lsp", "mcp", "mcp_sdk"):
        assert result[f"{face}_recall"]["n"] == 9 and result[f"{face}_get_node"]["p50_ms"] > 0
    assert result["mcp_over_lsp_get_node"]["p50"] > 0


def pi_session(turns: int) -> str:
    """A tiny session in Pi's JSONL shape (written here, not copied from the data set)."""
    lines = [{"type": "session", "id": "s", "timestamp": "2026-01-01T10:00:00Z"}]
    t = 1767261600000
    for k in range(turns):
        t += 20_000
        lines.append({"type": "message", "timestamp": t, "message": {"role": "user", "content": [
            {"type": "text", "text": f"step {k}: look at module_{k}_helper in src/mod_{k}.py"}]}})
        lines.append({"type": "message", "timestamp": t + 1000, "message": {
            "role": "assistant", "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0},
            "content": [{"type": "toolCall", "id": f"c{k}", "name": "read", "arguments": {"path": f"src/mod_{k}.py"}}]}})
        lines.append({"type": "message", "timestamp": t + 2000, "message": {
            "role": "toolResult", "toolCallId": f"c{k}", "toolName": "read",
            "content": [{"type": "text", "text": "\n".join(f"def fn_{k}_{i}(): return {i}" for i in range(300))}]}})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def test_context_benchmark_smoke(tmp_path):
    data = tmp_path / "transcripts"
    (data / "badlogic__pi-mono").mkdir(parents=True)
    (data / "badlogic__pi-mono" / "tiny.jsonl").write_text(pi_session(60))
    result = run_bench(tmp_path, "context", "--data", str(data), "--probes", "5")
    row = result["sessions"][0]
    assert row["requests"] == 60 and row["cost_l0_usd"] > 0 and row["cost_lore_usd"] > 0
    assert row["probes"]["asked"] == 5 and row["assemble_ms_in_process_largest"]["p95_ms"] > 0


def test_gateway_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "gateway", "--calls", "6")
    assert result["calls"] == 6 and result["overhead_ms"]["p50"] is not None


def test_ask_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "ask", "--questions", "3", "--latency-ms", "5")
    assert result["questions"] == result["answered"] == 3 and result["model_requests"] == 12
    assert 0 < result["cache_read_share_q2_20"] <= 1 and result["grep_repo_ms"]["p50"] > 0


def test_shared_benchmark_smoke(tmp_path):
    result = run_bench(tmp_path, "shared", "--creates", "3", "--per", "3", "--join", "300")
    assert [r["sidecars"] for r in result["runs"]] == [1, 3, 6] and result["runs"][2]["lag_ms"]["n"] == 3
    assert result["join"]["items"] == 300 and result["sqlite_one_machine_creates_per_s"] > 0
