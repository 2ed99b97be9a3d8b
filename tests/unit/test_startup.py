"""Start-up: what `lore-sidecar --stdio` does before it reads its first frame."""

import json
import subprocess
import sys

# Runs `lore-sidecar --stdio` with the stdio loop replaced by a probe of the collector.
PROBE = """
import gc, json, sys
import lore_sidecar.rpc.server as server
from lore_sidecar import cli

def probe(srv):
    print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                      "server": type(srv).__name__}))
    return 0

server.serve_stdio = probe
sys.exit(cli.main(["--stdio", "--store-dir", sys.argv[1]]))
"""


def test_the_collector_is_back_on_once_the_server_is_built_and_the_imports_are_frozen(tmp_path):
    # `serve` builds the server with the collector off (its full passes over pygls's and
    # lsprotocol's classes cost ~45 ms before `initialize`). It must be on again when the
    # loop starts, or every reference cycle the sidecar makes would leak for its lifetime.
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "store")], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout.strip().splitlines()[-1])
    assert state["server"] == "LoreServer"
    assert state["enabled"] is True
    # What the imports made was frozen (never scanned again), and it is the bulk of the heap.
    assert state["frozen"] > 50_000
