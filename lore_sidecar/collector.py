"""The garbage collector around start-up.

Importing pygls and lsprotocol (~600 attrs classes) makes about a hundred thousand objects
that live as long as the process. With the default thresholds the collector makes ~150
passes over that growing heap before `initialize` can be answered (~30 ms here). While the
server is built the young generation is allowed to grow to 10,000 objects instead of 700:
a fifth of the passes, and the garbage attrs leaves (the classes it replaces with slotted
ones, 8-9 MB if never collected) is still freed as it goes. Once `initialize` is answered,
one full pass collects what is left, the survivors (the imported modules) are frozen so no
later pass scans them, and the default thresholds come back.
"""

from __future__ import annotations

import gc

START_UP_THRESHOLD = 10_000
_saved: tuple[int, int, int] | None = None


def start_up() -> None:
    global _saved
    if _saved is None:
        _saved = gc.get_threshold()
        gc.set_threshold(START_UP_THRESHOLD, _saved[1], _saved[2])


def started() -> None:
    """End start-up's setting (idempotent)."""
    global _saved
    if _saved is not None:
        saved, _saved = _saved, None
        gc.collect()
        gc.freeze()
        gc.set_threshold(*saved)
