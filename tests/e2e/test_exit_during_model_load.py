"""A sidecar told to exit while its files model is still loading exits at once, with code 0,
instead of waiting out the load (an editor's restart right after opening a project; every
short-lived sidecar). The load is held open by the test (the real model, built only once the
test lets it), so "at once" is not a race: the client waits 10 s for the exit before it kills
the process, and the load is held for 120 s."""

from __future__ import annotations

import shutil
import sys
import textwrap
import time
from contextlib import contextmanager
from pathlib import Path

from lore_sidecar.client import StdioClient

HOLD = textwrap.dedent('''
    import pathlib, sys, time
    from lore_sidecar.llm import minilm
    flag, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    real = minilm.MiniLMEmbedder.__init__

    def held(self, *args, **kwargs):
        flag.write_text("loading")
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        real(self, *args, **kwargs)

    minilm.MiniLMEmbedder.__init__ = held
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[3:]))
''')


GEO = "def distance(a, b):\n    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5\n"


@contextmanager
def loading_sidecar(tmp_path: Path, ws: Path | None = None):
    """A sidecar over stdio whose files model is being built, the build held open (120 s at
    most) until the block ends; yields (client, workspace, its log file). `ws`: a workspace
    the store already holds."""
    if ws is None:
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "geo.py").write_text(GEO)
    script, flag, release = tmp_path / "held.py", tmp_path / "loading", tmp_path / "release"
    script.write_text(HOLD)
    log = tmp_path / "sidecar.log"
    cmd = [sys.executable, str(script), str(flag), str(release), "--stdio", "--store-dir", str(tmp_path / "store"),
           "-v", "--log-file", str(log)]
    c = StdioClient(cmd)
    try:
        c.initialize(ws, options={"watch": False, "distiller": "off"})
        deadline = time.monotonic() + 120
        while not flag.exists():  # the dense leg reached the files model
            assert time.monotonic() < deadline, "the files model was never asked for"
            time.sleep(0.1)
        yield c, ws, log
        assert not release.exists()  # the process ended while the load was still held
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()


def plain_sidecar(tmp_path: Path, ws: Path) -> StdioClient:
    """The same store, opened when nothing is loading (the controls)."""
    c = StdioClient([sys.executable, "-m", "lore_sidecar", "--stdio", "--store-dir", str(tmp_path / "store")])
    c.initialize(ws, options={"watch": False, "distiller": "off"})
    return c


def test_exit_while_the_files_model_loads_ends_the_process_at_once_with_code_0(tmp_path):
    with loading_sidecar(tmp_path) as (c, ws, log):
        code = c.close()
        assert code == 0, code  # not killed after the client's 10 s wait
        assert "model load left running" in log.read_text()

    # Control: the same store opens, answers, and exits normally once nothing is loading.
    again = plain_sidecar(tmp_path, ws)
    try:
        status = again.request("lore/status")
        assert status["storeDir"] == str(tmp_path / "store") and status["indexError"] is None
    finally:
        assert again.close() == 0


def test_a_store_whose_indexes_were_lost_counts_the_files_to_embed_and_exits_during_their_load(tmp_path):
    """A start that finds both indexes lost (a new release's schema, a deleted `index/`)
    rebuilds the words and embeds every record again. That embedding ran on the text leg's
    thread: `vectorLag` read 0 until it was over (both positions at 0), and a stop waited for
    the files model's load there (the client's 10 s wait, then a kill). Now the dense leg does
    it, the status counts the chunks still to embed, and an exit during the load is at once."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "geo.py").write_text(GEO)
    first = plain_sidecar(tmp_path, ws)
    try:
        deadline = time.monotonic() + 180
        while True:  # the files embedded once (the real model, loaded unheld)
            status = first.request("lore/status")
            if status["counts"]["chunks"] and status["vectorLag"] == 0 and status["indexLagMs"] == 0:
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        chunks = status["counts"]["chunks"]
    finally:
        assert first.close() == 0
    for epoch in (tmp_path / "store" / "index").iterdir():
        if epoch.is_dir():
            shutil.rmtree(epoch)
    with loading_sidecar(tmp_path, ws) as (c, ws, log):  # the load is the rebuild's
        status = c.request("lore/status")
        assert status["vectorLag"] >= chunks, status["vectorLag"]  # the files to embed, counted
        hits = c.request("lore/recall", {"query": "distance", "sources": ["files"]})["hits"]
        assert [Path(h["path"]).name for h in hits][:1] == ["geo.py"]  # the words are back meanwhile
        code = c.close()
        assert code == 0, code  # not killed after the client's 10 s wait
        assert "model load left running" in log.read_text()

    # Control: the next start embeds the files (unheld) and then says the vectors are level.
    again = plain_sidecar(tmp_path, ws)
    try:
        deadline = time.monotonic() + 180
        while (status := again.request("lore/status"))["vectorLag"] != 0:
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert status["counts"]["chunks"] == chunks and status["indexLagMs"] == 0
    finally:
        assert again.close() == 0


def test_an_exit_without_shutdown_while_the_files_model_loads_keeps_its_exit_code_1(tmp_path):
    """The early exit keeps the protocol's exit code: `exit` without `shutdown` is 1 (LSP),
    with a load left running as without one. The control is the same exit once nothing loads."""
    with loading_sidecar(tmp_path) as (c, ws, log):
        c.notify("exit")  # no shutdown first
        code = c.proc.wait(timeout=60)
        assert code == 1, code
        assert "model load left running" in log.read_text()

    again = plain_sidecar(tmp_path, ws)
    try:
        again.notify("exit")
        assert again.proc.wait(timeout=60) == 1
    finally:
        if again.proc.poll() is None:
            again.proc.kill()


def test_every_server_ends_through_the_same_exit_a_worker_left_running_takes(tmp_path):
    """The stdio server, the MCP server and the background indexer all close an engine and
    then end through `exit_leaving_loads`: with a `lore-dense` thread still alive the process
    ends at once with the given code (nothing after the call runs); the control, without one,
    gets the code back and goes on."""
    import subprocess

    script = textwrap.dedent('''
        import sys, threading, time
        from lore_sidecar.engine.indexing.loads import exit_leaving_loads
        if sys.argv[1] == "left":
            threading.Thread(target=time.sleep, args=(120,), name="lore-dense", daemon=True).start()
        code = exit_leaving_loads(3)
        print("returned", code, flush=True)
        sys.exit(code)
    ''')
    for case, printed in (("left", ""), ("none", "returned 3\n")):
        done = subprocess.run([sys.executable, "-c", script, case], capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (3, printed), (case, done.stderr[-500:])
    for path in ("lore_sidecar/rpc/server.py", "lore_sidecar/mcp_face/serve.py", "lore_sidecar/background.py"):
        from tests.conftest import ROOT

        assert "exit_leaving_loads(" in (ROOT / path).read_text(), path
