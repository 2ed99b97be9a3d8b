"""A sidecar told to shut down and exit during its first scan of the workspace answers at once
and ends at the scan's next progress report (every 200 files), instead of finishing the scan first (an editor
closed right after opening a big project lingered for the whole scan). Nothing acknowledged
is lost, and the next start scans the rest.

The scan is held by the test between two batches (the real scan, let go only when the test
says so, 120 s at most), so "at once" is not a race: the shutdown is answered while the scan
is still held, which a server that waited for the scan could not do."""

from __future__ import annotations

import sys
import textwrap
import time

from lore_sidecar.client import StdioClient

# The scan reports progress at files 0, 200, 400, 600 and writes a batch at files 255 and 511.
# It is held at file 450: between a report and a write, where an exit that closed the store
# without waiting for the scan would have it write into a closed store.
FILES = 700
HELD_AT = "notes/n450.md"

HOLD = textwrap.dedent('''
    import pathlib, sys, time
    from lore_sidecar.engine.workspace import index
    flag, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    real = index.WorkspaceIndex._write_for

    def held(self, project_id, rel, *args):
        if rel == sys.argv[3]:
            flag.write_text("held")
            deadline = time.monotonic() + 120
            while not release.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return real(self, project_id, rel, *args)

    index.WorkspaceIndex._write_for = held
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[4:]))
''')


def test_shutdown_and_exit_during_the_first_scan_end_at_its_next_progress_report_and_keep_what_was_acknowledged(tmp_path):
    ws = tmp_path / "ws"
    (ws / "notes").mkdir(parents=True)
    for i in range(FILES):
        (ws / "notes" / f"n{i:03d}.md").write_text(f"# Note {i}\n\nThe heron number {i} nests by the weir.\n")
    script, flag, release = tmp_path / "held.py", tmp_path / "held", tmp_path / "release"
    script.write_text(HOLD)
    log = tmp_path / "sidecar.log"
    store = tmp_path / "store"
    c = StdioClient([sys.executable, str(script), str(flag), str(release), HELD_AT, "--stdio", "--store-dir", str(store),
                     "-v", "--log-file", str(log)])
    try:
        c.initialize(ws, options={"watch": False, "distiller": "off"})
        deadline = time.monotonic() + 120
        while not flag.exists():  # the scan wrote its first batch and is held before its second
            assert time.monotonic() < deadline, "the scan never reached the held file"
            time.sleep(0.05)
        recorded = c.request("lore/recordMessages", {"sessionId": "s-exit", "messages": [
            {"id": "m1", "role": "user", "content": "The kingfisher ledger closes on Fridays."}]})
        assert recorded["recorded"] == 1 and recorded["durable"], recorded
        # Answered while the scan is held (a server that waited for the scan times out here).
        assert c.request("shutdown", timeout=60) is None
        c.notify("exit")
        assert not release.exists()
        release.write_text("go")  # the scan goes on to its next progress report, and stops there
        assert c.proc.wait(timeout=60) == 0
        text = log.read_text()
        assert "stopped: the process is exiting" in text, text[-2000:]
        assert " ERROR " not in text, text[-2000:]  # nothing closed under the scan
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()

    # The next start: the message is there, the first batch was kept, and the scan completes.
    again = StdioClient([sys.executable, "-m", "lore_sidecar", "--stdio", "--store-dir", str(store)])
    try:
        again.initialize(ws, options={"watch": False, "distiller": "off"})
        first = again.request("lore/status")
        assert 256 <= first["counts"]["files"] < FILES, first["counts"]  # stopped mid-way
        deadline = time.monotonic() + 120
        while (status := again.request("lore/status"))["counts"]["files"] < FILES:
            assert time.monotonic() < deadline, status["counts"]
            time.sleep(0.1)
        hits = again.request("lore/recall", {"query": "kingfisher ledger", "sources": ["messages"]})["hits"]
        assert [h["uri"] for h in hits] == ["session://s-exit/m1"]
        files = again.request("lore/recall", {"query": "heron 699 weir", "sources": ["files"]})["hits"]
        assert files, "the rest of the workspace was not scanned on the next start"
    finally:
        assert again.close() == 0


HOLD_IMPORTS = textwrap.dedent('''
    import importlib.abc, importlib.util, pathlib, sys, time
    flag, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])

    class Held(importlib.abc.MetaPathFinder):
        """Holds the execution of lore_sidecar.app (not the finding: that holds the global
        import lock, which no real import holds for long)."""

        def find_spec(self, name, path=None, target=None):
            if name != "lore_sidecar.app":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            real = spec.loader

            class Loader(importlib.abc.Loader):
                def create_module(self, spec):
                    return real.create_module(spec)

                def exec_module(self, module):
                    flag.write_text("importing")
                    deadline = time.monotonic() + 120
                    while not release.exists() and time.monotonic() < deadline:
                        time.sleep(0.05)
                    real.exec_module(module)

            spec.loader = Loader()
            return spec

    sys.meta_path.insert(0, Held())
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[3:]))
''')


def test_exit_while_the_engine_is_still_importing_ends_at_once_and_opens_no_store(tmp_path):
    """The engine's imports (the open's first seconds under load) are held for 120 s: the
    process ends with code 0 while they are held, never opening the store; the control opens
    the same store and answers."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# A\n\nThe osprey roosts by the weir.\n")
    script, flag, release = tmp_path / "held.py", tmp_path / "held", tmp_path / "release"
    script.write_text(HOLD_IMPORTS)
    log, store = tmp_path / "sidecar.log", tmp_path / "store"
    c = StdioClient([sys.executable, str(script), str(flag), str(release), "--stdio", "--store-dir", str(store),
                     "-v", "--log-file", str(log)])
    try:
        c.initialize(ws, options={"watch": False, "distiller": "off"})
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert time.monotonic() < deadline, "the engine's imports never began"
            time.sleep(0.05)
        assert c.request("shutdown", timeout=60) is None
        c.notify("exit")
        assert c.proc.wait(timeout=60) == 0  # with the imports still held
        assert not release.exists()
        assert "the store was not opened" in log.read_text()
        assert not (store / "lore.db").exists()
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()

    again = StdioClient([sys.executable, "-m", "lore_sidecar", "--stdio", "--store-dir", str(store)])
    try:
        again.initialize(ws, options={"watch": False, "distiller": "off"})
        assert again.request("lore/status")["storeDir"] == str(store)
    finally:
        assert again.close() == 0


# The walk (listing the tree before any file is read) is held at its 100th file; it reports
# every WALK_REPORT_FILES files found, so an exit stops it at its 1,000th of 2,400.
WALK_FILES = 2_400
HOLD_WALK = textwrap.dedent('''
    import pathlib, sys, time
    from lore_sidecar.engine.workspace import index
    flag, release, walked = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    real = index.walk

    def held(*args, **kwargs):
        for n, entry in enumerate(real(*args, **kwargs), 1):
            if n == 100:
                flag.write_text("held")
                deadline = time.monotonic() + 120
                while not release.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            yield entry
        walked.write_text(str(n))  # the walk listed the whole tree

    index.walk = held
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[4:]))
''')


def test_an_exit_during_the_first_scans_walk_ends_at_the_walks_next_report_not_after_the_whole_tree(tmp_path):
    """The walk of a big tree (50,000 files: seconds under load) used to check nothing, so an
    exit during it waited for the whole walk. Held at its 100th file of 2,400 until after
    `exit`: the walk never lists the rest. The control: the next start walks the whole tree
    and indexes it."""
    ws = tmp_path / "ws"
    for d in range(WALK_FILES // 200):
        (ws / f"d{d:02d}").mkdir(parents=True)
        for i in range(200):
            (ws / f"d{d:02d}" / f"f{i:03d}.txt").write_text(f"plover {d} {i}\n")
    script, flag, release, walked = tmp_path / "held.py", tmp_path / "held", tmp_path / "release", tmp_path / "walked"
    script.write_text(HOLD_WALK)
    log, store = tmp_path / "sidecar.log", tmp_path / "store"
    argv = [sys.executable, str(script), str(flag), str(release), str(walked), "--stdio", "--store-dir", str(store),
            "-v", "--log-file", str(log)]
    c = StdioClient(argv)
    try:
        c.initialize(ws, options={"watch": False, "distiller": "off"})
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert time.monotonic() < deadline, "the walk never reached its 100th file"
            time.sleep(0.05)
        assert c.request("shutdown", timeout=60) is None
        c.notify("exit")
        release.write_text("go")
        assert c.proc.wait(timeout=60) == 0
        text = log.read_text()
        assert "stopped: the process is exiting" in text, text[-2000:]
        assert not walked.exists(), "the walk listed the whole tree after exit"
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()

    release.unlink()
    flag.unlink()
    again = StdioClient(argv)
    try:
        again.initialize(ws, options={"watch": False, "distiller": "off"})
        release.write_text("go")
        deadline = time.monotonic() + 120
        while (status := again.request("lore/status"))["counts"]["files"] < WALK_FILES:
            assert time.monotonic() < deadline, status["counts"]
            time.sleep(0.1)
        assert walked.read_text() == str(WALK_FILES)
    finally:
        assert again.close() == 0
