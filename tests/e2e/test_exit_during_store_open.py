"""An exit that arrives while the store is opening is expected, not a failure: the process ends
with code 0 and logs no ERROR (an editor closed right after opening a project must not leave
one each time); a store that truly cannot open still logs one (the control).

The open is held by the test (the real open, let go only after `exit`, 120 s at most), so the
exit lands inside it every run. (Over stdio the loop has ended before `close` marks the server
stopped, so the background task that waited for the open is cancelled, not told shuttingDown;
tests/unit/test_server_close.py holds the level of that message where it is reached.)"""

from __future__ import annotations

import sys
import textwrap
import time

from lore_sidecar.client import StdioClient

HOLD_OPEN = textwrap.dedent('''
    import pathlib, sys, time
    import lore_sidecar.app as app
    flag, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    real = app.open_engine

    def held(*args, **kwargs):
        flag.write_text("opening")
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(*args, **kwargs)

    app.open_engine = held
    from lore_sidecar.cli import main
    sys.exit(main(sys.argv[3:]))
''')


def _held_sidecar(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# A\n\nThe osprey roosts by the weir.\n")
    script, flag, release = tmp_path / "held.py", tmp_path / "held", tmp_path / "release"
    script.write_text(HOLD_OPEN)
    log = tmp_path / "sidecar.log"
    c = StdioClient([sys.executable, str(script), str(flag), str(release), "--stdio", "--store-dir",
                     str(tmp_path / "store"), "-v", "--log-file", str(log)])
    c.initialize(ws, options={"watch": False, "distiller": "off"})
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert time.monotonic() < deadline, "the store never began to open"
        time.sleep(0.05)
    return c, release, log


def test_an_exit_while_the_store_opens_ends_with_code_0_and_logs_no_error(tmp_path):
    c, release, log = _held_sidecar(tmp_path)
    try:
        assert c.request("shutdown", timeout=60) is None
        c.notify("exit")
        release.write_text("go")  # the open finishes, sees the exit and closes the store again
        assert c.proc.wait(timeout=60) == 0
        lines = log.read_text().splitlines()
        assert any("fact rows replayed" in line for line in lines), lines[-20:]  # the store did open
        assert not [line for line in lines if " ERROR " in line], lines[-20:]
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()


def test_control_a_store_that_cannot_open_is_still_logged_at_error(tmp_path):
    """The same held open, but the store is unusable (its folder is a file): a real failure,
    which stays an ERROR."""
    store = tmp_path / "store"
    store.write_text("not a folder")
    c, release, log = _held_sidecar(tmp_path)
    try:
        release.write_text("go")
        deadline = time.monotonic() + 60
        while "store could not be opened" not in (text := log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, text[-2000:]
            time.sleep(0.05)
        line = next(line for line in text.splitlines() if "store could not be opened" in line)
        assert " ERROR " in line, line
    finally:
        release.write_text("go")
        if c.proc.poll() is None:
            c.proc.kill()
