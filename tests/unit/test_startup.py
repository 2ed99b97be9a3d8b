"""Start-up: the garbage collector runs less often while the server is built, and only then.

The sidecar runs for real (`cli.main(["--stdio"])` over pipes); the probe only reports the
collector's state at the moments that matter, on stderr.
"""

import gc
import json
import os
import subprocess
import sys
import time

from lore_sidecar.rpc.framing import encode

PROBE = """
import gc, json, sys
import lore_sidecar.rpc.server as server
from lore_sidecar import cli

def report(event):
    sys.stderr.write("PROBE " + json.dumps({"event": event, "threshold": gc.get_threshold(),
                     "frozen": gc.get_freeze_count(),
                     "full_collections": gc.get_stats()[2]["collections"]}) + "\\n")
    sys.stderr.flush()

from lore_sidecar import collector
opener, started = server._open_default_engine, collector.started

def open_engine(*args, **kwargs):
    report("engine-open")
    return opener(*args, **kwargs)

def collector_started():
    was = collector._saved is not None
    started()
    if was:
        report("collector-back-on")

server._open_default_engine = open_engine
collector.started = collector_started
sys.exit(cli.main(["--stdio", "--store-dir", sys.argv[1]]))
"""


def _frame(obj) -> bytes:
    return encode(json.dumps(obj).encode())


def _spawn(tmp_path):
    return subprocess.Popen([sys.executable, "-c", PROBE, str(tmp_path / "store")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)


def _probe_lines(proc, want: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stderr.fileno(), False)
    buf = b""
    while time.monotonic() < deadline:
        chunk = proc.stderr.read()
        if chunk:
            buf += chunk
            for line in buf.decode(errors="replace").splitlines():
                if line.startswith("PROBE ") and json.loads(line[6:])["event"] == want:
                    return json.loads(line[6:])
        time.sleep(0.02)
    raise AssertionError(f"no {want!r} probe in time; stderr: {buf[-2000:]!r}")


def _stop(proc) -> None:
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(timeout=30)


def test_the_collector_is_back_to_its_defaults_and_the_imports_frozen_before_the_engine_opens(tmp_path):
    # Built with a young generation of 10,000 objects (a fifth of the passes over pygls's
    # and lsprotocol's classes), back to the defaults once `initialize` is answered: else
    # cycles would wait 14x longer to be collected for the sidecar's whole life.
    proc = _spawn(tmp_path)
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "capabilities": {},
                                            "initializationOptions": {"indexWorkspace": False}}}))
        proc.stdin.flush()
        state = _probe_lines(proc, "engine-open")
        assert state["threshold"] == list(gc.get_threshold())
        # What start-up left was collected once (a full pass), then the survivors frozen.
        assert state["full_collections"] >= 1
        assert state["frozen"] > 50_000
    finally:
        _stop(proc)


def test_a_client_that_never_initializes_does_not_keep_the_start_up_setting(tmp_path):
    proc = _spawn(tmp_path)
    try:
        state = _probe_lines(proc, "collector-back-on")
        assert state["threshold"] == list(gc.get_threshold()) and state["frozen"] > 50_000
    finally:
        _stop(proc)
