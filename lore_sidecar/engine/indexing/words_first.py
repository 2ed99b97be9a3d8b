"""Words first: the legs that follow the text leg (vectors, distilling) wait for it.

They share the cores and the interpreter with indexing, and a write must be searchable by
its words before anything else is done with it. A wait on a stream of writes is bounded, so
a steady stream still gets its vectors and distillations; a wait on a workspace scan lasts
until the scan has written its last file (a scan ends).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WORDS_FIRST_MAX_S = 5.0  # the longest one wait on pending writes lasts
WRITES_PENDING = 1  # what a `busy()` answers: writes the text leg has not drained
SCAN_WRITING = 2  # a workspace scan is writing batch after batch (no bound: it ends)


def wait_for_words(busy: Callable[[], int], stop: threading.Event) -> None:
    """Return once `busy()` is false, `stop` is set, or WORDS_FIRST_MAX_S have passed with
    no scan writing. Trigger: a first scan of a big folder (50,000 files: a minute or
    more on two cores). Why: with the bound alone, the dense leg started a batch of MiniLM
    every 5 s of it, taking a core and loading the model (~100 MB) while the files were not
    yet searchable by their words. Outcome: during a scan the bound does not run, and it
    starts again when the scan stops writing: its last batches get the whole bound (the
    deadline used to run on through the scan, so the dense leg began embedding while the text
    leg still indexed and committed the scan's end: ~0.8 s of a core, 2,000 source files)."""
    deadline = time.monotonic() + WORDS_FIRST_MAX_S
    while (state := busy()) and not stop.is_set():
        if state == SCAN_WRITING:
            deadline = time.monotonic() + WORDS_FIRST_MAX_S
        elif time.monotonic() >= deadline:
            return
        stop.wait(0.01)
