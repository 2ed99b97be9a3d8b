"""VS Code cannot run offline here: the extension is compiled with tsc (every source file,
extension.ts included, type-checked against @types/vscode), and its request code runs
against the real sidecar over vscode-jsonrpc, the JSON-RPC stack vscode-languageclient uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

EXT = ROOT / "editors" / "vscode"


def npm_ci() -> None:
    stamp = EXT / "node_modules" / ".lore-installed"
    lock = (EXT / "package-lock.json").read_bytes()
    if stamp.exists() and stamp.read_bytes() == lock:
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=EXT, check=True, timeout=600)
    stamp.write_bytes(lock)


def test_the_extension_compiles_and_its_requests_work_against_the_sidecar(tmp_path):
    npm_ci()
    tsc = subprocess.run([str(EXT / "node_modules" / ".bin" / "tsc"), "-p", str(EXT)], capture_output=True, text=True, timeout=300)
    assert tsc.returncode == 0, tsc.stdout + tsc.stderr
    assert (EXT / "out" / "extension.js").exists() and (EXT / "out" / "lore.js").exists()
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    env = {**os.environ, "LORE_SIDECAR_CMD": f"{sys.executable} -m lore_sidecar --stdio --store-dir {tmp_path / 'store'}",
           "WORKSPACE": str(ws)}
    run = subprocess.run(["node", str(EXT / "test" / "requests.test.js")], capture_output=True, text=True, timeout=180, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["kept"].startswith("project://ws/") and seen["hits"] >= 1 and "1 knowledge" in seen["status"]
