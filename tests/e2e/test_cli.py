"""The human verbs run the same engine as the server."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_recall_status_and_reindex_verbs(tmp_path, workspace):
    store = str(tmp_path / "store")
    out = run("--store-dir", store, "recall", "invoice tax rate", "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    assert "src/billing.py" in out.stdout and "cues: invoice · tax · rate" in out.stdout
    raw = json.loads(run("--store-dir", store, "recall", "zebracornflakes", "--workspace", str(workspace), "--json").stdout)
    assert raw["hits"] == [] and raw["total"] == 0  # control: ignored files stay out
    status = json.loads(run("--store-dir", store, "status", "--workspace", str(workspace)).stdout)
    assert status["counts"]["files"] == 4 and status["role"] == "writer"
    rebuilt = json.loads(run("--store-dir", store, "reindex", "--workspace", str(workspace)).stdout)
    assert rebuilt["files"] == 4 and rebuilt["chunks"] >= 4
