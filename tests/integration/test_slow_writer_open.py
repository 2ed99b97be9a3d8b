"""A writer whose open is slow keeps its lock alive: a second sidecar started meanwhile waits
and becomes a follower; it does not break the lock of a live writer (app.py, election.py
`heartbeat_while_opening`). Real processes over stdio; the first one's open is held by the
test right after it won the lock, for longer than `writerStaleMs`."""

from __future__ import annotations

import sys
import textwrap
import threading
import time

from lore_sidecar.client import StdioClient, sidecar_command

HOLD_BUILD = textwrap.dedent('''
    import pathlib, sys, time
    import lore_sidecar.app as app
    flag, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    real = app.Root._build

    def held(self, writer):
        flag.write_text("writer" if writer else "follower")
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(self, writer)

    app.Root._build = held
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[3:]))
''')
OPTIONS = {"watch": False, "distiller": "off", "writerStaleMs": 2000}


def status(c: StdioClient) -> dict:
    """`lore/status` once the store is open (a request before it waits, or is told to retry)."""
    deadline = time.monotonic() + 120
    while True:
        r = c.request_full("lore/status", {}, timeout=120)
        if "result" in r or time.monotonic() > deadline:
            return r.get("result") or r
        time.sleep(0.1)


def test_a_second_sidecar_started_while_the_writer_opens_slowly_becomes_its_follower(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# A\n\nThe heron waits at the sluice.\n")
    store = tmp_path / "store"
    script, flag, release = tmp_path / "held.py", tmp_path / "held", tmp_path / "release"
    script.write_text(HOLD_BUILD)
    first = StdioClient([sys.executable, str(script), str(flag), str(release), "--stdio", "--store-dir", str(store)])
    second = None
    try:
        first.initialize(ws, options=OPTIONS)
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert time.monotonic() < deadline, "the first sidecar never began to open"
            time.sleep(0.05)
        assert flag.read_text() == "writer"  # it holds the lock, its open held
        time.sleep(3.0)  # past writerStaleMs: a lock nobody touched since it was won looks abandoned
        second = StdioClient(sidecar_command("--store-dir", str(store)))
        second.initialize(ws, options=OPTIONS)
        # The second's open runs in the background; let the first finish its open a moment later.
        threading.Timer(1.0, lambda: release.write_text("go")).start()
        got = status(second)
        assert got.get("role") == "follower", got
        assert got.get("writerPid") == first.proc.pid
        mine = status(first)
        assert mine.get("role") == "writer" and mine.get("writerPid") == first.proc.pid
        # Control: the first is the writer for good (no take-over pending): a status later agrees.
        time.sleep(1.0)
        assert status(second).get("writerPid") == first.proc.pid
    finally:
        release.write_text("go")
        for c in (second, first):
            if c is not None:
                c.close()
