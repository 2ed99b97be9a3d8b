"""How a process that closes an engine ends while a model load is left running.

A stop does not wait for a dense worker that is building its model (DenseWorker.stop): the
load cannot be interrupted and holds nothing of the index. Such a thread must never meet
interpreter shutdown inside onnx's or onnxruntime's native code, so only a process that ends
through `exit_leaving_loads` may leave one: the stdio and MCP servers and the background
indexer say so at their start (`leave_loads_at_stop`). Anywhere else (a CLI verb, a bench, a
test) a stop waits for the load.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

THREAD = "lore-dense"  # the dense worker's thread name
leave = False  # this process ends through exit_leaving_loads (leave_loads_at_stop)


def leave_loads_at_stop() -> None:
    """From now on a stop may leave a model load running (this process ends through
    `exit_leaving_loads`)."""
    global leave
    leave = True


def left_running() -> bool:
    """True when a dense worker thread outlived its stop: one left building its model, or one
    whose join timed out mid-call."""
    return any(t.name == THREAD and t.is_alive() for t in threading.enumerate())


def exit_leaving_loads(code: int, *, imports_running: bool = False) -> int:
    """With a worker left running, once everything is closed and saved, the process ends at
    once with `code` (logs and streams flushed first); otherwise `code` is returned for the
    normal exit. `imports_running`: a thread is still importing the engine's modules (the
    store not yet touched), which interpreter shutdown would otherwise wait out."""
    if imports_running:
        log.info("exiting with the engine's imports left running (the store was not opened)")
    elif not left_running():
        return code
    else:
        log.info("exiting with a model load left running")
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
