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
    result = run_bench(tmp_path, "core", "--sizes", "300", "--queries", "10", "--files", "10")
    size = result["messages"]["sizes"][0]
    assert size["messages"] == 300 and size["recall_hybrid_p50_ms"] > 0 and size["fts5_p50_ms"] > 0
    assert result["workspace"]["files"] == 10 and result["initialize"]["runs"] == 7


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
