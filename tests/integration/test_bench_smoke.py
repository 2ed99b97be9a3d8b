"""The core benchmark runs end to end on a tiny corpus, so it cannot rot unnoticed."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def test_core_benchmark_smoke(tmp_path):
    out = tmp_path / "core.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "core.py"), "--sizes", "300", "--queries", "10", "--files", "10", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    size = result["messages"]["sizes"][0]
    assert size["messages"] == 300 and size["recall_hybrid_p50_ms"] > 0 and size["fts5_p50_ms"] > 0
    assert result["workspace"]["files"] == 10 and result["initialize"]["runs"] == 7


def test_failover_benchmark_smoke(tmp_path):
    out = tmp_path / "failover.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "failover.py"), "--kills", "2", "--probes", "6", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["failover"]["death_to_first_commit"]["n"] == 2
    assert result["failover"]["peer_cold_restart_to_first_commit"]["n"] == 2
    assert result["follower_sees_commit"]["follower"]["n"] == 3


def test_facts_benchmark_smoke(tmp_path):
    out = tmp_path / "facts.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "facts.py"), "--facts", "500", "--queries", "50", "--asserts", "20", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["replay"]["journalLines"] == result["journal_lines"] == 500
    assert result["fact_rows"] > 400 and result["asserts"]["n"] == 20
    assert result["queries"]["current by subject"]["p50_ms"] > 0
