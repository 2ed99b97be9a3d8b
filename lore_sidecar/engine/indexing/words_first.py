"""Words first: the legs that follow the text leg (vectors, distilling) wait for it.

They share the cores and the interpreter with indexing, and a write must be searchable by
its words before anything else is done with it. Each wait is bounded, so a steady stream of
writes still gets its vectors and distillations.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WORDS_FIRST_MAX_S = 5.0  # the longest one wait lasts


def wait_for_words(busy: Callable[[], bool], stop: threading.Event) -> None:
    """Return once `busy()` is false, `stop` is set, or WORDS_FIRST_MAX_S have passed."""
    deadline = time.monotonic() + WORDS_FIRST_MAX_S
    while busy() and not stop.is_set() and time.monotonic() < deadline:
        stop.wait(0.01)
