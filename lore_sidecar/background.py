"""`lore-sidecar indexer`: the short-lived background indexer a CLI call leaves behind.

A CLI call answers from what is indexed by its words and exits; embedding a fresh workspace
takes minutes on two cores (issue 37: a first recall blocked 120 s on it). So when the call
held the writer role and left the meaning index behind, it starts this detached process,
which waits for the call to give the role up, takes it, embeds what is left and exits: when
the meaning index is level, when it stops moving for `--idle-ms`, when another instance holds
the writer role (a sidecar or the hook daemon embeds then), or when told to (`indexer --stop`,
SIGTERM). One per store: `<store>/indexer.lock` (flock) elects it; `<store>/indexer.json`
says who it is, for `status` and `doctor`.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from lore_sidecar.spawn import module_command
from lore_sidecar.store.indexer_lock import INFO, LOG, hold, info, write_info

log = logging.getLogger(__name__)
IDLE_S = 60.0  # the meaning index did not move for this long: something else is wrong; stop
PARENT_WAIT_S = 120.0  # how long to wait for the CLI call that started us to give up the role
POLL_S = 0.5


def start(store: Path, workspace: str, *, after_pid: int | None = None) -> bool:
    """Start one detached for this store, unless one runs. True when one was started."""
    store = Path(store)
    fd = hold(store, tries=1)
    if fd is None:
        return False  # one runs
    # Trigger: the child takes ~1 s to import before it could lock. Why: a `status`, `stop` or
    # writer verb in that second saw no indexer and raced it for the role. Outcome: the lock
    # is taken here and handed to the child (the same open file, so the same flock), and
    # who it is is written before this returns.
    try:
        args = ["--store-dir", str(store), "indexer", "--workspace", workspace, "--lock-fd", str(fd)]
        if after_pid:
            args += ["--after-pid", str(after_pid)]
        with open(store / LOG, "ab") as err:
            child = subprocess.Popen(module_command("lore_sidecar", *args), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, pass_fds=(fd,))
        write_info(store, child.pid, workspace)
    finally:
        os.close(fd)  # the child holds the lock from here on
    return True


def stop(store: Path, timeout: float = 30.0) -> dict[str, Any] | None:
    """Ask the running one to stop (it saves what it embedded) and wait until it has; returns
    what ran, or None when none did."""
    running = info(store)
    if running is None or not running.get("pid"):
        return running
    try:
        os.kill(int(running["pid"]), signal.SIGTERM)
    except ProcessLookupError:
        return running
    deadline = time.monotonic() + timeout
    while info(store) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return running


def run(store_dir: str | None, workspace: str, *, idle_s: float = IDLE_S, after_pid: int | None = None,
        lock_fd: int | None = None) -> int:
    from lore_sidecar import logs
    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    cli = {"storeDir": store_dir} if store_dir else {}
    settings, warnings = load_settings(workspace_root=Path(workspace), cli=cli)
    logs.apply_settings(settings, cli_chose=logging.getLogger().level != logging.WARNING)
    store = Path(settings.store_dir)
    if lock_fd is not None:  # handed over by start(), already locked
        os.set_inheritable(lock_fd, False)
        fd: int | None = lock_fd
    else:
        fd = hold(store)
        if fd is None:
            return 0  # one runs already
        write_info(store, os.getpid(), workspace)
    from lore_sidecar.engine.indexing.loads import exit_leaving_loads, leave_loads_at_stop

    leave_loads_at_stop()  # this process ends through exit_leaving_loads, below
    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    reason = "stopped"
    try:
        engine = open_engine(settings, [workspace])
        try:
            reason = _embed(engine, stopping, idle_s, after_pid)
        finally:
            engine.close()  # the writer saves its vector snapshot
    finally:
        try:
            (store / INFO).unlink()
        except FileNotFoundError:
            pass
        os.close(fd)
    # Its stderr is <store>/indexer.log: say why it ended whatever the log level.
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} lore-sidecar indexer {os.getpid()}: {reason}",
          file=sys.stderr, flush=True)
    return exit_leaving_loads(0)


def _embed(engine: Any, stopping: threading.Event, idle_s: float, after_pid: int | None) -> str:
    """Until the meaning index is level (or idle, stopped, or another instance writes)."""
    from lore_sidecar.engine.status import dense_behind

    scanned, last, moved, since = False, None, time.monotonic(), time.monotonic()
    while not stopping.wait(POLL_S):
        if not engine.role.writer:
            if engine.role.writer_pid != after_pid or time.monotonic() - since > PARENT_WAIT_S:
                return f"pid {engine.role.writer_pid} holds the writer role"
            continue
        if not scanned:  # files changed since the call that started us, or its scan was cut short
            engine.index.scan()
            scanned = True
        to_go = engine.index.progress()["meaning"]["chunksToGo"]
        if to_go == 0 and not dense_behind(engine.view):
            return "the meaning index is level"
        dense = engine.view.indexer.dense if engine.view.indexer is not None else None
        # Busy: a step of MiniLM on two loaded cores takes minutes, and the count moves only
        # when the step is done; only a worker that is neither embedding nor able to is idle.
        busy = dense is not None and dense.lock.locked() and dense.error is None
        if to_go != last or busy:
            last, moved = to_go, time.monotonic()
        elif time.monotonic() - moved > idle_s:
            return f"idle: {to_go} to go did not move for {idle_s:.0f} s" + (f" ({dense.error})" if dense and dense.error else "")
    return "stopped"
