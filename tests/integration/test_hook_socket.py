"""The hook daemon's socket when another daemon takes its name over (hook/daemon.py: it exits
"when its socket is taken over"), on real Unix sockets in a store made for the test."""

from __future__ import annotations

import socket
import threading
import time

from lore_sidecar.hook.daemon import HookDaemon


def _answers(path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True


def test_a_daemon_whose_socket_was_taken_over_exits_and_leaves_its_successors_socket(tmp_path):
    """The name is freed (the first's socket file moved aside) and a second daemon binds it:
    the first notices, stops serving and must not remove the socket that is now the second's.
    The control: the second, stopping in turn, removes its own."""
    store = tmp_path / "store"
    store.mkdir()
    first = HookDaemon(None, store, idle_s=120)
    server = first.bind()
    assert server is not None
    bound_at = first.last
    serving = threading.Thread(target=first.serve, args=(server,), daemon=True)
    serving.start()
    assert _answers(first.path)
    deadline = time.monotonic() + 30
    while first.last == bound_at and time.monotonic() < deadline:  # serving: it accepted that connection
        time.sleep(0.05)
    assert first.last != bound_at
    # The name is free again; moved, not removed, so the new socket cannot reuse its inode.
    first.path.rename(store / "moved-aside.sock")
    second = HookDaemon(None, store, idle_s=120)
    successor = second.bind()
    assert successor is not None
    mine = second.path.stat().st_ino
    serving.join(30)
    assert not serving.is_alive()  # the first stepped aside
    assert second.path.exists() and second.path.stat().st_ino == mine and _answers(second.path)
    second._stop.set()
    second.serve(successor)  # returns at once (stopped) and cleans up its own socket
    assert not second.path.exists()
